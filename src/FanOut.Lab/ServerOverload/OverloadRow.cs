namespace FanOut.Lab.ServerOverload;

/// <summary>How the service under test protects itself: one row of the table.</summary>
/// <param name="Name">The row's label.</param>
/// <param name="Kind">The mechanism.</param>
/// <param name="Permits">ASP.NET Core ConcurrencyLimiter's permit count (and queue) for the fixed rows.</param>
/// <param name="QueuePerPermit">FanOut's <c>QueuePerPermit</c> for the FanOut rows; null for the package's default.</param>
/// <param name="PriorityReserve">FanOut's <c>PriorityReserve</c> for the FanOut rows; null for the package's default.</param>
/// <param name="InitialLimit">The adaptive limit's <c>InitialLimit</c> for the FanOut rows; null for <c>DefaultLimitOptions</c>'.</param>
/// <param name="FixedLimit">A fixed limit instead of the adaptive one for the FanOut rows (the admission alone, at a known limit); null for none.</param>
/// <param name="SheddableWaitPerServiceTime">FanOut's <c>SheddableWaitPerServiceTime</c> for the FanOut rows; null for the package's default.</param>
/// <param name="WatchThreadPoolLag">FanOut's <c>WatchThreadPoolLag</c> for the FanOut rows (false: the cores' hold and the lag's overloads off).</param>
/// <param name="ViaRateLimiter">For the FanOut rows: the admission as ASP.NET Core's global rate limiter (<c>AddRateLimiter</c>, <c>UseRateLimiter</c>) instead of <c>UseFanOutConcurrency()</c>.</param>
public sealed record OverloadRow(string Name, OverloadRowKind Kind, int Permits = 0, double? QueuePerPermit = null, double? PriorityReserve = null, int? InitialLimit = null, int? FixedLimit = null, double? SheddableWaitPerServiceTime = null, bool ViaRateLimiter = false, bool WatchThreadPoolLag = true)
{
    public static OverloadRow NoLimiter { get; } = new("no limiter", OverloadRowKind.NoLimiter);

    public static OverloadRow FanOutAdaptive { get; } = new("FanOut adaptive", OverloadRowKind.FanOutAdaptive);

    public static OverloadRow FanOutPriorities { get; } = new("FanOut adaptive + priorities (20% critical)", OverloadRowKind.FanOutPriorities);

    /// <summary>The priorities row with the admission plugged into ASP.NET Core's rate limiting (its global limiter): the same admission, the other registration.</summary>
    public static OverloadRow FanOutPrioritiesViaRateLimiter { get; } = FanOutPriorities with { Name = "FanOut adaptive + priorities, via UseRateLimiter", ViaRateLimiter = true };

    /// <summary>The priorities row without the reserve (<c>PriorityReserve</c> 0): the baseline the reserve is measured against.</summary>
    public static OverloadRow FanOutPrioritiesNoReserve { get; } = FanOutPriorities with { Name = "FanOut adaptive + priorities, no reserve", PriorityReserve = 0 };

    /// <summary>The adaptive row starting at 16 instead of the server's 4: a start <c>DefaultLimit</c> was measured with and did not take (docs/server.md).</summary>
    public static OverloadRow FanOutAdaptiveStart16 { get; } = FanOutAdaptive with { Name = "FanOut adaptive, InitialLimit 16", InitialLimit = 16 };

    /// <summary>The priorities row with another <c>PriorityReserve</c>, to measure the reserve's size.</summary>
    public static OverloadRow FanOutPrioritiesReserve(double reserve) =>
        FanOutPriorities with { Name = string.Create(System.Globalization.CultureInfo.InvariantCulture, $"FanOut adaptive + priorities, reserve {reserve}"), PriorityReserve = reserve };

    /// <summary>The priorities row on a fixed limit (the admission and its queue without the adaptive law).</summary>
    public static OverloadRow FanOutPrioritiesFixed(int limit) =>
        FanOutPriorities with { Name = string.Create(System.Globalization.CultureInfo.InvariantCulture, $"FanOut fixed {limit} + priorities"), FixedLimit = limit };

    /// <summary>The priorities row with another <c>SheddableWaitPerServiceTime</c> (100: the queue timeout bounds a sheddable request's wait, as before the option).</summary>
    public static OverloadRow FanOutPrioritiesSheddableWait(double serviceTimes) =>
        FanOutPriorities with { Name = string.Create(System.Globalization.CultureInfo.InvariantCulture, $"FanOut adaptive + priorities, sheddable wait {serviceTimes} service times"), SheddableWaitPerServiceTime = serviceTimes };

    public static OverloadRow AspNetConcurrency(int permits, string label) =>
        new($"ASP.NET Core ConcurrencyLimiter {permits} + queue {permits} ({label})", OverloadRowKind.AspNetConcurrencyLimiter, permits);
}

/// <summary>The protection mechanisms compared.</summary>
public enum OverloadRowKind
{
    NoLimiter,
    AspNetConcurrencyLimiter,
    FanOutAdaptive,
    FanOutPriorities,
}

/// <summary>One cell's figures: a row at one load.</summary>
public sealed record OverloadCell(
    string Row,
    double LoadFactor,
    double OfferedPerSecond,
    int Sent,
    double GoodputPerSecond,
    double P50Ms,
    double P99Ms,
    double RefusedShare,
    double FailedShare,
    double CriticalSuccess,
    double SheddableSuccess,
    double MeanLimit,
    IReadOnlyList<(double Seconds, int Limit)> LimitTimeline,
    double CriticalP99Ms = double.NaN,
    double OtherP99Ms = double.NaN);
