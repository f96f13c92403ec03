using System.Diagnostics;

using FanOut.Lab.Measurement;
using FanOut.Lab.Strategies;

namespace FanOut.Lab.Tests.Measurement;

/// <summary>A recorded run keeps its adaptive limit's changes with their reasons: from the real "FanOut" event source, only
/// its own limit's, and never more than <see cref="LimitDecisionRecorder.MaxDecisions"/>.</summary>
public sealed class LimitDecisionRecorderTests
{
    [Fact]
    public async Task RunRecorder_FanOutAgainstADownstreamThatRejects_TimelineHasTheOverloadWithItsReason()
    {
        // A downstream that serves 3 at once and rejects the rest; the limit starts above it, so it must back off.
        var name = LimitNames.Next();
        var other = LimitNames.Next();
        using var sampler = new RuntimeSampler(TimeSpan.FromHours(1));
        using var recorder = new RunRecorder(sampler, new InFlightProbe(), new TimelineSources(LimitName: () => name));
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = name });
        var beside = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = other });

        recorder.Start();
        await Task.WhenAll(RejectingRunAsync(limit), RejectingRunAsync(beside)); // another limit's changes, at the same time
        var decisions = recorder.Stop().Timeline!.Decisions!;

        Assert.NotEmpty(decisions);
        var overload = decisions.First(d => d.Reason == nameof(LimitChangeReason.Overload));
        Assert.True(overload.To < overload.From, $"{overload}");
        Assert.True(overload.InFlight > 0, $"{overload}");
        Assert.All(decisions, d => Assert.InRange(d.TimeMs, 0, 60_000));

        // Only this limit's: its changes add up to the way from where it started to where it stands. (Summed, not chained:
        // a change is published outside the limit's lock, so two workers' changes may arrive in either order.)
        Assert.All(decisions, d => Assert.NotEqual(d.From, d.To));
        Assert.Equal(limit.Current - new AdaptiveLimitOptions().InitialLimit, decisions.Sum(d => d.To - d.From));
    }

    [Fact]
    public void RunRecorder_NoLimitName_RecordsNoDecisions()
    {
        using var sampler = new RuntimeSampler(TimeSpan.FromHours(1));
        using var recorder = new RunRecorder(sampler, new InFlightProbe(), new TimelineSources(LimitName: () => null));

        recorder.Start();
        var timeline = recorder.Stop().Timeline!;

        Assert.Null(timeline.Decisions);
        Assert.Null(timeline.DecisionsDropped);
    }

    [Fact]
    public void Record_ManySlowStartStepsAndOverloads_KeepsEveryOverloadAndAccountsForEveryStep()
    {
        using var recorder = new LimitDecisionRecorder(LimitNames.Next());
        var start = Stopwatch.GetTimestamp();
        recorder.Start(start);
        var limit = 10;
        var steps = 0;
        var overloads = 0;
        for (var round = 0; round < 20; round++)
        {
            for (var i = 0; i < 100; i++, steps++)
            {
                recorder.Record(start + round, limit, limit + 1, nameof(LimitChangeReason.SlowStartGrowth), 0, 10, limit);
                limit++;
            }

            recorder.Record(start + round, limit, limit / 2, nameof(LimitChangeReason.Overload), 15, 10, limit);
            limit /= 2;
            overloads++;
        }

        var decisions = recorder.Decisions();

        Assert.InRange(decisions.Count, 1, LimitDecisionRecorder.MaxDecisions);
        Assert.Equal(overloads, decisions.Count(d => d.Reason == nameof(LimitChangeReason.Overload)));
        Assert.Equal(0, recorder.Dropped);
        Assert.Equal(steps, decisions.Where(d => d.Reason == nameof(LimitChangeReason.SlowStartGrowth)).Sum(d => d.Steps));
        Assert.Contains(decisions, d => d.Steps > 1); // merged, not dropped
        for (var i = 1; i < decisions.Count; i++)
        {
            Assert.Equal(decisions[i - 1].To, decisions[i].From);
        }
    }

    [Fact]
    public void Record_MoreThanMaxDecisionsNoneOfThemSlowStart_KeepsTheFirstAndCountsTheRest()
    {
        using var recorder = new LimitDecisionRecorder(LimitNames.Next());
        var start = Stopwatch.GetTimestamp();
        recorder.Start(start);
        const int Total = LimitDecisionRecorder.MaxDecisions + 123;
        for (var i = 0; i < Total; i++)
        {
            recorder.Record(start, 20 + (i % 2), 21 - (i % 2), i % 2 == 0 ? nameof(LimitChangeReason.Probe) : nameof(LimitChangeReason.QueueSeen), 12, 10, 20);
        }

        Assert.Equal(LimitDecisionRecorder.MaxDecisions, recorder.Decisions().Count);
        Assert.Equal(123, recorder.Dropped);
    }

    [Fact]
    public void Record_AfterStop_IsNotTheRuns()
    {
        using var recorder = new LimitDecisionRecorder(LimitNames.Next());
        var start = Stopwatch.GetTimestamp();
        recorder.Start(start);
        recorder.Record(start, 10, 5, nameof(LimitChangeReason.Overload), 20, 10, 10);

        recorder.Stop();
        recorder.Record(start, 0, 5, nameof(LimitChangeReason.PauseEnded), 0, 10, 0);

        Assert.Equal([nameof(LimitChangeReason.Overload)], recorder.Decisions().Select(d => d.Reason));
    }

    /// <summary>100 items, each 2 ms, through <paramref name="limit"/> against a downstream that serves 3 at once and rejects the rest (no re-runs).</summary>
    private static async Task RejectingRunAsync(ConcurrencyLimit limit)
    {
        var serving = 0;
        try
        {
            await Enumerable.Range(0, 100).FanOutAsync(
                async (_, ct) =>
                {
                    try
                    {
                        if (Interlocked.Increment(ref serving) > 3)
                        {
                            throw new OverloadedException("downstream full");
                        }

                        await Task.Delay(2, ct);
                    }
                    finally
                    {
                        Interlocked.Decrement(ref serving);
                    }
                },
                new FanOutOptions { Limit = limit, Errors = ErrorMode.RunAll, OverloadRetries = 0 });
        }
        catch (FanOutException)
        {
            // The rejected items failed; every item ran.
        }
    }
}
