using System.Runtime.CompilerServices;

using FanOut;

// "fanout" (default): fan-outs under an adaptive limit named "orders" and a Fixed(3) until stdin closes.
// "idle": waits for stdin to close without ever loading FanOut.
var mode = args.Length > 0 ? args[0] : "fanout";
using var stop = new CancellationTokenSource();
var work = mode == "idle" ? Task.CompletedTask : Workload.RunAsync(stop.Token);
_ = work.ContinueWith(
    static t =>
    {
        // A workload that fails would leave the watch nothing to see: say so and end at once.
        Console.Error.WriteLine($"FanOut.WatchTarget: the workload failed: {t.Exception}");
        Environment.Exit(3);
    },
    CancellationToken.None,
    TaskContinuationOptions.OnlyOnFaulted,
    TaskScheduler.Default);
Console.WriteLine($"ready {Environment.ProcessId}");
while (Console.ReadLine() is not null)
{
}

await stop.CancelAsync();
await work;
return 0;

/// <summary>The work the watch sees (in its own type, so that "idle" never loads FanOut.dll).</summary>
internal static class Workload
{
    /// <summary>The downstream's capacity: more calls at once are refused as overloaded.</summary>
    private const int Capacity = 12;

    private static int s_inFlight;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public static Task RunAsync(CancellationToken cancellationToken) => Task.WhenAll(
        LoopAsync(ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = "orders", InitialLimit = 4 }), cancellationToken),
        LoopAsync(ConcurrencyLimit.Fixed(3), cancellationToken));

    private static async Task LoopAsync(ConcurrencyLimit limit, CancellationToken cancellationToken)
    {
        var options = new FanOutOptions { Limit = limit, OverloadRetries = 0, Errors = ErrorMode.RunAll };
        while (!cancellationToken.IsCancellationRequested)
        {
            try
            {
                await Enumerable.Range(0, 200).FanOutAsync(CallAsync, options, cancellationToken);
            }
            catch (FanOutException)
            {
                // Refusals are the point: the adaptive limit learns from them.
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    private static async ValueTask CallAsync(int item, CancellationToken cancellationToken)
    {
        try
        {
            if (Interlocked.Increment(ref s_inFlight) > Capacity)
            {
                throw new OverloadedException("over capacity");
            }

            await Task.Delay(5, cancellationToken);
        }
        finally
        {
            Interlocked.Decrement(ref s_inFlight);
        }
    }
}
