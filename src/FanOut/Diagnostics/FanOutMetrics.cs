using System.Diagnostics.Metrics;

namespace FanOut.Diagnostics;

/// <summary>
/// The "FanOut" <see cref="Meter"/> and its instruments. Every measurement is guarded by the instrument's
/// <c>Enabled</c>, so with no listener (no dotnet-counters, no OpenTelemetry) the hot path pays one field read per instrument.
/// </summary>
internal static class FanOutMetrics
{
    internal const string KindTag = "fanout.limit.kind";

    internal static readonly Meter s_meter = new(FanOutInstruments.MeterName, typeof(FanOutMetrics).Assembly.GetName().Version?.ToString());

    internal static readonly UpDownCounter<long> InFlight = s_meter.CreateUpDownCounter<long>(
        FanOutInstruments.ItemsInFlight, "{item}", "Items whose body is running.");

    internal static readonly Gauge<int> Limit = s_meter.CreateGauge<int>(
        FanOutInstruments.LimitCurrent, "{item}", "The concurrency limit, recorded when a call starts and whenever an adaptive limit changes.");

    internal static readonly Counter<long> Completed = s_meter.CreateCounter<long>(
        FanOutInstruments.ItemsCompleted, "{item}", "Items whose body completed successfully.");

    internal static readonly Counter<long> Failed = s_meter.CreateCounter<long>(
        FanOutInstruments.ItemsFailed, "{item}", "Items whose body threw.");

    internal static readonly Counter<long> Retried = s_meter.CreateCounter<long>(
        FanOutInstruments.ItemsRetried, "{item}", "Attempts of items run again after their body failed with an overload signal.");

    internal static readonly Histogram<double> Duration = s_meter.CreateHistogram<double>(
        FanOutInstruments.ItemDuration, "s", "Time from an item's start to its body's completion.",
        tags: null,
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] });

    /// <summary>The most records of one publication: a user-written limit whose value moves at every read still returns.</summary>
    private const int MaxRecordsPerChange = 8;

    /// <summary>
    /// Records <paramref name="limit"/>'s current value, and again while it changed meanwhile. Changes are published
    /// outside the limit's lock, in any order, so whichever publisher records last records the value the limit ended at.
    /// </summary>
    internal static void RecordLimit(ConcurrencyLimit limit)
    {
        if (!Limit.Enabled)
        {
            return;
        }

        var tags = Tags(limit.Kind, limit.Name);
        var value = limit.Current;
        for (var records = 0; records < MaxRecordsPerChange; records++)
        {
            Limit.Record(value, tags);
            var now = limit.Current;
            if (now == value)
            {
                return;
            }

            value = now;
        }
    }

    /// <summary>The tags of a limit's measurements: its kind, and its name when it has one.</summary>
    internal static KeyValuePair<string, object?>[] Tags(string kind, string? name) => name is null
        ? [new(KindTag, kind)]
        : [new(KindTag, kind), new(FanOutInstruments.LimitNameTag, name)];
}
