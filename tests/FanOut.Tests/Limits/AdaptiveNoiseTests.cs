using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Limits;

/// <summary>
/// Issue 29 item 1, pure waits in a fresh process: scheduling noise is not a queue. A latency rise within the noise floor
/// (a 1 ms timer firing late) and one stalled round (a cold process, a collection) must not end slow start; a queue, which
/// persists, still does. Rounds on a <see cref="FakeTimeProvider"/>: every call in flight answers after the same time.
/// </summary>
public sealed class AdaptiveNoiseTests
{
    private static AdaptiveConcurrencyLimit Adaptive(FakeTimeProvider clock) =>
        (AdaptiveConcurrencyLimit)ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = clock });

    /// <summary>
    /// Takes every permit, lets <paramref name="latency"/> pass, and answers every call in flight; then lets half a round
    /// trip pass before the next round, in which slow start's paced growth (SlowStartPacer) is granted.
    /// </summary>
    private static void Round(AdaptiveConcurrencyLimit limit, FakeTimeProvider clock, Queue<long> started, TimeSpan latency)
    {
        while (limit.TryAcquire())
        {
            started.Enqueue(limit.RecordStart());
        }

        clock.Advance(latency);
        while (started.Count > 0)
        {
            limit.RecordCompletion(started.Dequeue(), ItemOutcome.Succeeded);
            limit.Release();
        }

        clock.AdvanceInSteps(latency / 2);
    }

    private static void GrowTo(AdaptiveConcurrencyLimit limit, FakeTimeProvider clock, Queue<long> started, TimeSpan latency, int level)
    {
        for (var round = 0; round < 20 && limit.Current < level; round++)
        {
            Round(limit, clock, started, latency);
        }

        Assert.True(limit.Current >= level && limit.InSlowStart, $"clean rounds: {limit.Current}, slow start {limit.InSlowStart}");
    }
}
