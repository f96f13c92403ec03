using System.Diagnostics;
using System.Globalization;

using FanOut.Benchmarks.Costs;

namespace FanOut.Benchmarks.Tracing;

/// <summary>
/// <c>-- tracing [rounds]</c>: the tracing overhead in one process, alternating rounds (<see cref="AlternatingRounds"/>):
/// no listener, a listener on another source only, a listener on "FanOut" that samples nothing, one that records every
/// activity. Prints ns per item and bytes per call, medians.
/// </summary>
public static class TracingCostMeasurement
{
    public const int DefaultRounds = 15;

    public static async Task RunAsync(int rounds)
    {
        var items = Enumerable.Range(0, TracingOverheadBenchmarks.Items).ToArray();
        var contenders = new[]
        {
            new Contender("no listener", () => TracingListeners.Run(items)),
            new Contender("listener on another source", () => With(OtherSource(), items)),
            new Contender("listener not sampling", () => With(TracingListeners.Attach(ActivitySamplingResult.None), items)),
            new Contender("listener recording all", () => With(TracingListeners.Attach(ActivitySamplingResult.AllDataAndRecorded), items)),
        };

        var measured = await AlternatingRounds.RunAsync(contenders, rounds);
        var baseline = measured[0].MedianMilliseconds;
        Console.WriteLine($"{TracingOverheadBenchmarks.Items:N0} synchronous items per call, Fixed({Environment.ProcessorCount}), {rounds} rounds, medians");
        Console.WriteLine("| contender | ns/item | vs no listener | bytes/call |");
        Console.WriteLine("|---|---:|---:|---:|");
        foreach (var m in measured)
        {
            var nsPerItem = m.MedianMilliseconds * 1e6 / TracingOverheadBenchmarks.Items;
            Console.WriteLine(string.Create(
                CultureInfo.InvariantCulture,
                $"| {m.Name} | {nsPerItem:F1} | {m.MedianMilliseconds / baseline:F2}x | {m.MedianBytes:N0} |"));
        }
    }

    private static async Task With(ActivityListener listener, int[] items)
    {
        using (listener)
        {
            await TracingListeners.Run(items);
        }
    }

    private static ActivityListener OtherSource()
    {
        var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == "Some.Other.Source",
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
        };
        ActivitySource.AddActivityListener(listener);
        return listener;
    }
}
