using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>The exact-capacity test and the next level to try between the last level within capacity and the first beyond it.</summary>
/// <remarks>
/// <para>A server with capacity C (workers, threads, a semaphore, <c>limit_conn</c>) serves min(N, C) at once. Beyond C it
/// either rejects the rest (429/503) or queues them. With <paramref name="ByRejections"/> the test is the rejections
/// themselves: a level is within capacity when at most <see cref="AllowedFailures"/> of its requests failed. Without
/// (a queueing server), the test is Little's law: in a closed loop of N workers the mean latency is N / X; within capacity
/// it stays the unqueued latency R0, beyond it every request waits for one of C and it grows to N/C x R0, so a level is
/// within capacity when its mean latency is under R0 x N / (N - 1/2) (half a queued request), plus two standard errors of
/// the difference of the two means as an unqueued level would show it (the unqueued level's spread: a level beyond
/// capacity has a wide spread because of its queue, which must not widen its own tolerance).</para>
/// <para>The estimate of C comes from the levels beyond it: X x R0 (ok/s times the unqueued latency) for a queueing server,
/// ok/s x the ok answers' mean latency (the requests served at once) for a rejecting one. The search measures the rounded
/// estimate first and then steps of one toward the boundary (the estimate is usually right to within one), and falls back
/// to bisection when the estimate misled it twice.</para>
/// </remarks>
/// <param name="ByRejections">The server rejects beyond its capacity (else it queues).</param>
/// <param name="UnqueuedMs">R0: the mean latency of an ok answer with no queue, milliseconds.</param>
/// <param name="UnqueuedStdDevMs">The standard deviation of the latencies R0 is the mean of.</param>
/// <param name="UnqueuedAnswers">How many answers R0 is the mean of.</param>
/// <param name="SloP99Ms">The latency objective, or null: a level over it is beyond capacity.</param>
public sealed record CapacitySearch(bool ByRejections, double UnqueuedMs, double UnqueuedStdDevMs, long UnqueuedAnswers, double? SloP99Ms)
{
    /// <summary>The share of failed requests above which a level is beyond capacity.</summary>
    public const double MaxFailureFraction = 0.01;

    /// <summary>How many estimate-guided levels are tried before plain bisection.</summary>
    public const int GuidedSteps = 3;

    /// <summary>Null when <paramref name="level"/> is within capacity; else why not, in a few words.</summary>
    /// <param name="level">The level judged.</param>
    /// <param name="below">The level one under it, if measured: a rejecting server's level with rejections above one with none is beyond.</param>
    public string? Failure(LevelResult level, LevelResult? below = null)
    {
        ArgumentNullException.ThrowIfNull(level);
        var requests = Math.Max(1, level.Requests);
        string Percent(long part) => (100.0 * part / requests).ToString("0.#", CultureInfo.InvariantCulture) + "%";
        if (level.Ok == 0)
        {
            return "no ok answer";
        }

        if (level.FailureCount > AllowedFailures(level))
        {
            var what = level.Rejections >= level.FailureCount ? "rejected (429/503)" : "failed";
            return $"{Percent(level.FailureCount)} {what}";
        }

        // The allowance is for the races of a level at the capacity; one more worker whose answers come in lockstep (a
        // fixed latency) is refused less than its share, so rejections one above a level that had none mark the capacity.
        if (ByRejections && level.Rejections > 0 && below is { FailureCount: 0, EndedBy: LevelEnd.Measured } && below.Concurrency == level.Concurrency - 1)
        {
            return $"{Percent(level.Rejections)} rejected (429/503) where {below.Concurrency.ToString(CultureInfo.InvariantCulture)} had none";
        }

        if (SloP99Ms is { } slo && level.LatencyP99Ms is { } p99 && p99 > slo)
        {
            return $"p99 {ProbeText.Ms(p99)} is over the {ProbeText.Ms(slo)} objective";
        }

        if (!ByRejections && level.LatencyMeanMs is { } mean && mean > LatencyLimitMs(level))
        {
            var n = level.Concurrency;
            var queued = UnqueuedMs * n / (n - 0.5);
            return $"mean latency {Ms(mean)} ms is over {Ms(LatencyLimitMs(level))} ms (unqueued {Ms(UnqueuedMs)} ms x {n}/{(n - 0.5).ToString("0.#", CultureInfo.InvariantCulture)} = {Ms(queued)} ms, plus {Ms(NoiseMs(level))} ms of measurement noise): requests queued";
        }

        return null;
    }

    /// <summary>Failures a level within capacity may have: <see cref="MaxFailureFraction"/> of its requests, or half a
    /// worker's share (0.5 / N) when that is less: one worker over a capacity of C is rejected about 1 / (C + 1) of the
    /// time, which for C of 100 or more is under 1%.</summary>
    public static double AllowedFailures(LevelResult level)
    {
        ArgumentNullException.ThrowIfNull(level);
        return Math.Min(MaxFailureFraction, 0.5 / Math.Max(1, level.Concurrency)) * Math.Max(1, level.Requests);
    }

    /// <summary>The highest mean latency a level of <paramref name="level"/>'s concurrency may have within capacity.</summary>
    public double LatencyLimitMs(LevelResult level)
    {
        ArgumentNullException.ThrowIfNull(level);
        var n = level.Concurrency;
        return n <= 1 ? double.PositiveInfinity : (UnqueuedMs * n / (n - 0.5)) + NoiseMs(level);
    }

    /// <summary>Two standard errors of the difference between <paramref name="level"/>'s mean and R0, were both unqueued.</summary>
    public double NoiseMs(LevelResult level)
    {
        ArgumentNullException.ThrowIfNull(level);
        return 2 * UnqueuedStdDevMs * Math.Sqrt((1.0 / Math.Max(1, level.Ok)) + (1.0 / Math.Max(1, UnqueuedAnswers)));
    }

    /// <summary>The capacity a level beyond it shows (Little's law), or null when it shows none.</summary>
    public double? Evidence(LevelResult level)
    {
        ArgumentNullException.ThrowIfNull(level);
        if (level.Ok == 0)
        {
            return null;
        }

        return ByRejections ? level.OkLittleConcurrency : level.OkPerSecond * UnqueuedMs / 1000;
    }

    /// <summary>The capacity the levels beyond it show: the median of their <see cref="Evidence"/>; null when none.</summary>
    public double? Estimate(IEnumerable<LevelResult> beyond)
    {
        ArgumentNullException.ThrowIfNull(beyond);
        var values = beyond.Select(Evidence).OfType<double>().Where(v => v > 0).Order().ToArray();
        return values.Length == 0 ? null
            : values.Length % 2 == 1 ? values[values.Length / 2]
            : (values[(values.Length / 2) - 1] + values[values.Length / 2]) / 2;
    }

    /// <summary>The next level to measure strictly between <paramref name="within"/> (within capacity) and
    /// <paramref name="beyond"/> (beyond it), or null when they are adjacent.</summary>
    /// <param name="within">The highest level found within capacity.</param>
    /// <param name="beyond">The lowest level found beyond it.</param>
    /// <param name="estimate">The Little's-law estimate, or null.</param>
    /// <param name="guidedSoFar">Estimate-guided levels already measured.</param>
    public static int? Next(int within, int beyond, double? estimate, int guidedSoFar)
    {
        if (beyond - within <= 1)
        {
            return null;
        }

        if (estimate is { } e && guidedSoFar < GuidedSteps && double.IsFinite(e))
        {
            return (int)Math.Clamp(Math.Round(e, MidpointRounding.AwayFromZero), within + 1, beyond - 1);
        }

        return within + ((beyond - within) / 2);
    }

    /// <summary>Milliseconds with two decimals (four under a millisecond, where a fast endpoint's figures live), so the
    /// reason's sum reads as one.</summary>
    private string Ms(double value) => value.ToString(UnqueuedMs < 1 ? "0.0000" : "0.00", CultureInfo.InvariantCulture);
}
