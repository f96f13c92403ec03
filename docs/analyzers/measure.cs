// What FO0001 and FO0004 cost, measured: `dotnet run docs/analyzers/measure.cs` (a .NET 10 file-based app, ~3 s).
// Item 0 fails after 50 ms, while the other workers are in their 200 ms waits.
// FO0001: an async lambda in Parallel.ForEach is async void: the loop returns before the work ends.
// FO0004: a body that passes the outer token keeps working after another item failed.
using System.Diagnostics;

const int Items = 500;
const int DelayMs = 20;
const int FailingItems = 100;
const int Limit = 4;
const int SlowItemMs = 200;
const int FailAfterMs = 50;

var finished = 0;
var clock = Stopwatch.StartNew();
Parallel.ForEach(Enumerable.Range(0, Items), async item =>
{
    await Task.Delay(DelayMs);
    Interlocked.Increment(ref finished);
});
var returnedMs = clock.Elapsed.TotalMilliseconds;
var finishedAtReturn = Volatile.Read(ref finished);
await Task.Delay(1000);
Console.WriteLine($"FO0001: Parallel.ForEach({Items} x async Task.Delay({DelayMs})) returned after {returnedMs:F1} ms with {finishedAtReturn}/{Items} items finished; 1 s later {Volatile.Read(ref finished)}/{Items}");

foreach (var useBodyToken in new[] { false, true })
{
    using var outer = new CancellationTokenSource();
    var completed = 0;
    clock.Restart();
    try
    {
        await Parallel.ForEachAsync(Enumerable.Range(0, FailingItems), new ParallelOptions { MaxDegreeOfParallelism = Limit, CancellationToken = outer.Token }, async (item, token) =>
        {
            if (item == 0)
            {
                await Task.Delay(FailAfterMs, token);
                throw new InvalidOperationException("item 0 failed");
            }

            await Task.Delay(SlowItemMs, useBodyToken ? token : outer.Token);
            Interlocked.Increment(ref completed);
        });
    }
    catch (InvalidOperationException)
    {
    }

    Console.WriteLine($"FO0004: {(useBodyToken ? "body token " : "outer token")}: ForEachAsync faulted after {clock.Elapsed.TotalMilliseconds:F0} ms; {completed} other items ran their {SlowItemMs} ms to the end after item 0 failed");
}
