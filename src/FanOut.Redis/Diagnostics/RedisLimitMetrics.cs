using System.Diagnostics.Metrics;

using FanOut.Diagnostics;

namespace FanOut.Redis.Diagnostics;

/// <summary>
/// The instruments of <see cref="RedisLimitInstruments"/>, on a meter named like FanOut's own, so a listener of the FanOut
/// meter (<c>dotnet-counters --counters FanOut</c>, OpenTelemetry <c>AddMeter("FanOut")</c>) sees them beside the library's.
/// </summary>
internal static class RedisLimitMetrics
{
    private static readonly Meter s_meter = new(FanOutInstruments.MeterName, typeof(RedisLimitMetrics).Assembly.GetName().Version?.ToString());

    internal static readonly UpDownCounter<long> LeasesHeld = s_meter.CreateUpDownCounter<long>(
        RedisLimitInstruments.LeasesHeld, "{lease}", "Leases this process holds, busy and idle.");

    internal static readonly Gauge<int> FleetInUse = s_meter.CreateGauge<int>(
        RedisLimitInstruments.FleetInUse, "{lease}", "Leases held fleet-wide.");

    internal static readonly Histogram<double> WaitDuration = s_meter.CreateHistogram<double>(
        RedisLimitInstruments.WaitDuration, "s", "Time a worker waited for a permit no idle lease here could serve.");

    internal static readonly Counter<long> Renewals = s_meter.CreateCounter<long>(
        RedisLimitInstruments.Renewals, "{lease}", "Leases renewed or re-added by heartbeats.");

    internal static readonly Counter<long> Expiries = s_meter.CreateCounter<long>(
        RedisLimitInstruments.Expiries, "{lease}", "Expired leases purged by this process's scripts.");

    internal static readonly Counter<long> Lost = s_meter.CreateCounter<long>(
        RedisLimitInstruments.Lost, "{lease}", "Leases of this process gone at renewal and not re-added.");

    internal static readonly Counter<long> Unavailable = s_meter.CreateCounter<long>(
        RedisLimitInstruments.Unavailable, "{round}", "Acquisition or renewal rounds that could not reach Redis.");
}
