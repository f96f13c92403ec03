using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;

namespace FanOut.Diagnostics;

/// <summary>
/// The <c>fanout.partition.in_flight</c> gauge: observed on demand over every live partitioned limit, held weakly, so a limit
/// nobody references any more is collected and stops reporting.
/// </summary>
internal static class PartitionMetrics
{
    private static readonly ConditionalWeakTable<object, Action<List<Measurement<int>>>> s_limits = new();

    private static readonly ObservableGauge<int> s_inFlight = FanOutMetrics.s_meter.CreateObservableGauge(
        FanOutInstruments.PartitionInFlight, Observe, "{item}", "Items in flight per partition key of a partitioned limit.");

    internal static void Register(object limit, Action<List<Measurement<int>>> observe) => s_limits.AddOrUpdate(limit, observe);

    private static IEnumerable<Measurement<int>> Observe()
    {
        var measurements = new List<Measurement<int>>();
        foreach (var pair in s_limits)
        {
            pair.Value(measurements);
        }

        return measurements;
    }
}
