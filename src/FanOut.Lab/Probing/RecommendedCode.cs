using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>The recommendation as code to paste, one snippet per API: <c>recommendation.code</c> in probe.json.</summary>
/// <param name="FanOut">FanOut's <c>ConcurrencyLimit.Fixed(n)</c>, and the rate as <c>FanOutOptions.RateLimiter</c>.</param>
/// <param name="ParallelForEachAsync"><c>Parallel.ForEachAsync</c> with <c>MaxDegreeOfParallelism = n</c> (a rate lease taken by hand).</param>
/// <param name="SemaphoreSlim">A <c>SemaphoreSlim(n)</c> gate around each call (a rate lease taken by hand).</param>
public sealed record RecommendedCode(string FanOut, string ParallelForEachAsync, string SemaphoreSlim)
{
    /// <summary>How often the suggested token bucket refills.</summary>
    private const int ReplenishMilliseconds = 100;

    /// <summary>The snippets for <paramref name="limit"/> at once and, when not null, <paramref name="ratePerSecond"/> requests per second.</summary>
    public static RecommendedCode For(int limit, double? ratePerSecond)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        var n = limit.ToString(CultureInfo.InvariantCulture);
        var limiter = ratePerSecond is { } rate ? RateLimiterLine(rate) + "\n" : string.Empty;
        var acquire = ratePerSecond is null ? string.Empty : "using var lease = await rate.AcquireAsync(1, ct); ";
        var call = $"{{ {acquire}await CallAsync(item, ct); }}";
        var fanOutRate = ratePerSecond is null ? string.Empty : ", RateLimiter = rate";
        return new RecommendedCode(
            $"{limiter}await items.FanOutAsync(async (item, ct) => await CallAsync(item, ct), new FanOutOptions {{ Limit = ConcurrencyLimit.Fixed({n}){fanOutRate} }}, cancellationToken);",
            $"{limiter}await Parallel.ForEachAsync(items, new ParallelOptions {{ MaxDegreeOfParallelism = {n}, CancellationToken = cancellationToken }}, async (item, ct) => {call});",
            $"{limiter}using var gate = new SemaphoreSlim({n});\nvar ct = cancellationToken;\nawait Task.WhenAll(items.Select(async item => {{ await gate.WaitAsync(ct); try {call} finally {{ gate.Release(); }} }}));");
    }

    /// <summary>A <c>TokenBucketRateLimiter</c> refilling <paramref name="rate"/> per second, in 100 ms steps (whole tokens), without a burst above one step.</summary>
    private static string RateLimiterLine(double rate)
    {
        var perStep = rate * ReplenishMilliseconds / 1000;
        var tokens = Math.Max(1, (int)Math.Round(perStep));
        var periodMs = Math.Max(1, (int)Math.Round(tokens * 1000 / rate));
        var t = tokens.ToString(CultureInfo.InvariantCulture);
        var p = periodMs.ToString(CultureInfo.InvariantCulture);
        return $"using var rate = new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions {{ TokenLimit = {t}, TokensPerPeriod = {t}, ReplenishmentPeriod = TimeSpan.FromMilliseconds({p}), QueueLimit = int.MaxValue, AutoReplenishment = true }}); // System.Threading.RateLimiting";
    }
}
