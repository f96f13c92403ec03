using FanOut.Redis.Adaptive;
using FanOut.Redis.Diagnostics;
using FanOut.Redis.Leases;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Redis.Tests.Adaptive;

/// <summary>One process's claim on the adaptive budget, on a fake clock: what its items' outcomes make it ask Redis, and when.</summary>
/// <remarks>No round trip happens here: the script's answers are written by hand.</remarks>
public sealed class FleetClaimTests
{
    private readonly FakeTimeProvider _time = new();

    [Fact]
    public void TakeRequest_BeforeTheJoinWasAnswered_JoinsAndClaimsNothing()
    {
        var (claim, _) = Create();

        Assert.Equal(0, claim.Limit);
        Assert.Equal(new BudgetRequest(BudgetRequest.Join, 0, -1, 10), claim.TakeRequest(refresh: false));

        // An answer before the join teaches nothing: there is no law yet.
        claim.OnCompleted(_time.GetTimestamp(), ItemOutcome.Succeeded, null, inFlight: 1);
        Assert.Equal(0, claim.Limit);

        Assert.True(claim.OnReply(new BudgetRequest(BudgetRequest.Join, 0), new BudgetReply(5, 0, 0, true, Claim: 3)));
        Assert.Equal(3, claim.Limit);
        Assert.Null(claim.TakeRequest(refresh: false));
    }

    [Fact]
    public void OnCompleted_AnswersThatDidNotQueue_GrowTheClaimInSlowStart()
    {
        var (claim, _) = Joined(4);

        for (var i = 0; i < 4; i++)
        {
            var start = _time.GetTimestamp();
            _time.Advance(TimeSpan.FromMilliseconds(10));
            claim.OnCompleted(start, ItemOutcome.Succeeded, null, inFlight: claim.Limit);
        }

        Assert.Equal(8, claim.Limit);
        Assert.Equal(8, claim.TakeRequest(refresh: false)!.Value.Claim);
    }

    [Fact]
    public void OnCompleted_ANoToAnAttemptStartedSinceTheLastBackOff_IsTheFleetsOnceEvenAtTheLeast()
    {
        var (claim, fleet) = Joined(1);
        fleet.ObserveBudget(6, generation: 3, pausedMs: 0);
        var before = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(10));

        // At its least the law cannot cut, but the fleet backs off: the generation this process knew goes to Redis.
        claim.OnCompleted(before, ItemOutcome.Overloaded, null, inFlight: 1);
        Assert.Equal(1, claim.Limit);
        Assert.Equal(3, claim.TakeRequest(refresh: false)!.Value.OverloadGeneration);

        // A "no" to an attempt started before that back-off is the same burst's.
        claim.OnCompleted(before, ItemOutcome.Overloaded, null, inFlight: 1);
        Assert.Null(claim.TakeRequest(refresh: false));
    }

    [Fact]
    public void OnFleetOverload_BacksTheLawOffAtItsOwnLevel_UnlessItBackedOffWithinAWindow()
    {
        var (claim, fleet) = Joined(20);

        // Another process's "no" raised the generation: this law backs off as if it had seen it at 20, 0.9 x 20.
        fleet.ObserveBudget(21, generation: 1, pausedMs: 0);
        Assert.Equal(18, claim.Limit);
        Assert.Equal(new BudgetRequest(18, 0, -1, 10), claim.TakeRequest(refresh: false));

        // Within a window (10 ms before any success) the same burst raised by another process changes nothing more.
        _time.Advance(TimeSpan.FromMilliseconds(5));
        fleet.ObserveBudget(19, generation: 2, pausedMs: 0);
        Assert.Equal(18, claim.Limit);

        // A generation read back for a moment (a message overtaking a reply) is not a new back-off.
        _time.Advance(TimeSpan.FromMilliseconds(20));
        fleet.ObserveBudget(19, generation: 1, pausedMs: 0);
        fleet.ObserveBudget(19, generation: 2, pausedMs: 0);
        Assert.Equal(18, claim.Limit);

        fleet.ObserveBudget(19, generation: 3, pausedMs: 0);
        Assert.Equal(16, claim.Limit);
    }

    [Fact]
    public void OnCompleted_RetryAfterStorm_PausesTheFleetToTheLatestHintAndBacksTheLawOffOnce()
    {
        var (claim, _) = Joined(10);
        var stormStart = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(10));

        claim.OnCompleted(stormStart, ItemOutcome.Overloaded, TimeSpan.FromMilliseconds(300), inFlight: 10);
        var afterFirst = claim.Limit;
        for (var i = 0; i < 5; i++)
        {
            claim.OnCompleted(stormStart, ItemOutcome.Overloaded, TimeSpan.FromMilliseconds(500), inFlight: 9 - i);
        }

        Assert.Equal(9, afterFirst); // min(0.9 x 10, 10 - 1)
        Assert.Equal(afterFirst, claim.Limit); // the storm's other "no"s teach the law nothing
        var request = claim.TakeRequest(refresh: false)!.Value;
        Assert.Equal(500, request.PauseMs);
        Assert.Equal(9, request.Claim);
    }

    [Fact]
    public void TryPark_OncePerOverloadedAttempt_ReleasesTheLeaseAfterAWindow()
    {
        var (claim, _) = Joined(4);
        var start = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(1));
        claim.OnCompleted(start, ItemOutcome.Overloaded, null, inFlight: 4);

        Assert.True(claim.TryPark());
        Assert.False(claim.TryPark());
        Assert.Equal(0, claim.TakeUnparked(out var next));
        Assert.Equal(TimeSpan.FromMilliseconds(10), next);

        _time.Advance(TimeSpan.FromMilliseconds(10));
        Assert.Equal(1, claim.TakeUnparked(out next));
        Assert.Null(next);
    }

    private (FleetClaim Claim, FleetState Fleet) Create(AdaptiveBudgetOptions? options = null)
    {
        options ??= new AdaptiveBudgetOptions();
        var wake = new WakeSignal();
        var pause = new FleetPause(_time, wake);
        var fleet = new FleetState(options.InitialBudget, _time, pause, new RedisLimitTelemetry("test"), options.MinBudget, options.MaxBudget);
        var claim = new FleetClaim(options, _time, wake, "test", fleet);
        fleet.GenerationRose = () => claim.OnFleetOverload(inFlight: 1);
        return (claim, fleet);
    }

    /// <summary>A claim whose join Redis answered with <paramref name="initial"/>.</summary>
    private (FleetClaim Claim, FleetState Fleet) Joined(int initial)
    {
        var (claim, fleet) = Create();
        var join = claim.TakeRequest(refresh: false)!.Value;
        Assert.True(claim.OnReply(join, new BudgetReply(initial, 0, 0, true, initial)));
        return (claim, fleet);
    }
}
