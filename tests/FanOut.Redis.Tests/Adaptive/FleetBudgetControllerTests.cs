using FanOut.Redis.Adaptive;
using FanOut.Redis.Diagnostics;
using FanOut.Redis.Leases;
using FanOut.Redis.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Redis.Tests.Adaptive;

/// <summary>One process's half of the adaptive budget, on a fake clock: which requests its items' outcomes make, and when.</summary>
/// <remarks>No round trip happens here; the fixture's connection only backs the owner limit the local leases count permits in.</remarks>
public sealed class FleetBudgetControllerTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private readonly FakeTimeProvider _time = new();

    [Fact]
    public void OnCompleted_BurstOfOverloads_AsksOneDecreaseUntilTheBudgetMoves()
    {
        var (controller, fleet, _) = Create();
        var start = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(20));

        for (var i = 0; i < 10; i++)
        {
            controller.OnCompleted(start, ItemOutcome.Overloaded);
        }

        Assert.Equal(new BudgetRequest(true, 0, 10, 0, 0.9, SeenBudget: 16), controller.TakeRequest());
        Assert.Null(controller.TakeRequest());

        // The decrease lands; items that started before this process learned of it bring back the old budget's 429s.
        _time.Advance(TimeSpan.FromMilliseconds(5));
        fleet.ObserveBudget(14, 1, 0);
        _time.Advance(TimeSpan.FromMilliseconds(5));
        controller.OnCompleted(start, ItemOutcome.Overloaded);
        Assert.Null(controller.TakeRequest());

        // So does one that started while the fleet's leases drained to the new budget (within a window of it).
        var draining = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(1));
        controller.OnCompleted(draining, ItemOutcome.Overloaded);
        Assert.Null(controller.TakeRequest());

        // An item that started under the new budget, drained, and was rejected is new evidence.
        _time.Advance(controller.Window);
        var later = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(20));
        controller.OnCompleted(later, ItemOutcome.Overloaded);
        Assert.Equal(1, controller.TakeRequest()?.Generation);
    }

    [Fact]
    public void OnRequestFailed_DecreaseLost_NextOverloadAsksAgain()
    {
        var (controller, _, _) = Create();
        var start = _time.GetTimestamp();
        controller.OnCompleted(start, ItemOutcome.Overloaded);
        var request = controller.TakeRequest()!.Value;
        controller.OnCompleted(start, ItemOutcome.Overloaded);
        Assert.Null(controller.TakeRequest());

        controller.OnRequestFailed(request);
        controller.OnCompleted(start, ItemOutcome.Overloaded);

        Assert.Equal(request, controller.TakeRequest());
    }

    [Fact]
    public void OnCompleted_OverloadWithRetryAfter_AsksAFleetPauseCappedAtMaxPause()
    {
        var (controller, _, _) = Create(new AdaptiveBudgetOptions { MaxPause = TimeSpan.FromSeconds(30) });
        var start = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(20));

        // The judgement alone asks nothing: the hint comes with the completion, the one path of every source.
        Assert.True(controller.IsOverload(new OverloadedException("busy", TimeSpan.FromSeconds(5))));
        Assert.Null(controller.TakeRequest());
        controller.OnCompleted(start, ItemOutcome.Failed, TimeSpan.FromSeconds(5));
        Assert.Null(controller.TakeRequest()); // only an overload's hint pauses

        controller.OnCompleted(start, ItemOutcome.Overloaded, TimeSpan.FromSeconds(5));
        Assert.Equal(new BudgetRequest(true, 0, 10, 5000, 0.9, SeenBudget: 4), controller.TakeRequest()); // the storm's one decrease, and its pause

        controller.OnCompleted(start, ItemOutcome.Overloaded, TimeSpan.FromSeconds(600));
        var request = controller.TakeRequest();
        Assert.Equal(30_000, request?.PauseMs); // capped at MaxPause
        Assert.Equal(-1, request?.Generation); // the same burst: a longer pause, no second cut
    }

    [Fact]
    public void OnCompleted_Success_AsksGrowthOnlyWhileWorkersWaitAndOncePerWindow()
    {
        var (controller, _, leases) = Create();
        var start = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(10));
        controller.OnCompleted(start, ItemOutcome.Succeeded);
        Assert.Null(controller.TakeRequest()); // nobody here wants more

        Assert.True(leases.TryEnqueue(new LeaseWaiter(Owner(), _time.GetTimestamp())));
        controller.OnCompleted(start, ItemOutcome.Succeeded);
        Assert.False(controller.TakeRequest()?.Overload);
        controller.OnCompleted(start, ItemOutcome.Succeeded);
        Assert.Null(controller.TakeRequest()); // within the same window

        _time.Advance(controller.Window);
        controller.OnCompleted(_time.GetTimestamp() - 1, ItemOutcome.Succeeded);
        Assert.False(controller.TakeRequest()?.Overload);
    }

    [Fact]
    public void OnCompleted_FirstContact_GrowsOnlyOnAnswersAboutTheCurrentBudget()
    {
        // Issue 29's first-contact law for the fleet: a small start, growth per answered round trip, none by the clock.
        var (controller, fleet, leases) = Create(new AdaptiveBudgetOptions { InitialBudget = 8 });
        Assert.True(leases.TryEnqueue(new LeaseWaiter(Owner(), _time.GetTimestamp())));
        var first = _time.GetTimestamp();
        var second = first + 1;
        _time.Advance(TimeSpan.FromSeconds(10));
        Assert.Null(controller.TakeRequest()); // nothing answered: time alone grows nothing

        controller.OnCompleted(first, ItemOutcome.Succeeded); // the first answer, 10 s: the window
        Assert.False(controller.TakeRequest()?.Overload);
        Assert.Equal(TimeSpan.FromSeconds(10), controller.Window);
        fleet.ObserveBudget(12, 0, 0); // the fleet grew to 12

        // An item started under 8 answers a window later: it says nothing about 12.
        _time.Advance(TimeSpan.FromSeconds(10));
        controller.OnCompleted(second, ItemOutcome.Succeeded);
        Assert.Null(controller.TakeRequest());

        // One started under 12 does.
        var underTwelve = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromSeconds(10));
        controller.OnCompleted(underTwelve, ItemOutcome.Succeeded);
        Assert.False(controller.TakeRequest()?.Overload);

        // A rejection: a decrease, and no growth within a window of it.
        fleet.ObserveBudget(18, 0, 0);
        var underEighteen = _time.GetTimestamp();
        _time.Advance(controller.Window);
        controller.OnCompleted(underEighteen, ItemOutcome.Overloaded);
        Assert.True(controller.TakeRequest()?.Overload);
        controller.OnCompleted(underEighteen, ItemOutcome.Succeeded);
        Assert.Null(controller.TakeRequest());
    }

    [Fact]
    public void OnCompleted_SuccessHoldingEveryLeaseWhileOthersWait_AsksGrowth()
    {
        // The stall of issue 21: the first process took the whole initial budget, its call never waits (no local waiter),
        // and the other processes wait for its leases; growth must not wait for a local waiter.
        var (controller, fleet, leases) = Create();
        leases.AddGranted(Enumerable.Range(0, 16).Select(i => $"lease-{i}").ToArray());
        var start = _time.GetTimestamp();
        _time.Advance(TimeSpan.FromMilliseconds(10));
        controller.OnCompleted(start, ItemOutcome.Succeeded);
        Assert.Null(controller.TakeRequest()); // nobody in the fleet wants more

        fleet.OtherWaiting();
        _time.Advance(controller.Window);
        controller.OnCompleted(start, ItemOutcome.Succeeded);

        Assert.Equal(0, leases.WaiterCount);
        Assert.False(controller.TakeRequest()?.Overload);
    }

    [Fact]
    public void OnBudgetChanged_Decrease_ShedsThisProcesssProportionalPart()
    {
        var (controller, fleet, leases) = Create();
        leases.AddGranted(Enumerable.Range(0, 8).Select(i => $"lease-{i}").ToArray());

        fleet.ObserveBudget(12, 1, 0); // from 16: 8 held keep 8 x 12 / 16 = 6

        Assert.True(controller.TryShed());
        Assert.True(controller.TryShed());
        Assert.False(controller.TryShed());
    }

    [Fact]
    public void FleetPause_Active_NoIdleLeaseHandedOutUntilItEnds()
    {
        var wake = new WakeSignal();
        var pause = new FleetPause(_time, wake);
        var leases = new LocalLeases(Owner(), 16, _time, new RedisLimitTelemetry("test"), pause);
        leases.AddGranted(["a", "b"]);
        leases.LiveFrom(System.Diagnostics.Stopwatch.GetTimestamp(), TimeSpan.FromHours(1)); // as a script just sent would say

        pause.Extend(1000);
        Assert.False(leases.TryTakeIdle());
        _time.Advance(TimeSpan.FromMilliseconds(999));
        Assert.False(pause.TryEnd());
        Assert.False(leases.TryTakeIdle());
        _time.Advance(TimeSpan.FromMilliseconds(1));

        Assert.True(pause.TryEnd());
        Assert.True(leases.TryTakeIdle());
    }

    private (FleetBudgetController Controller, FleetState Fleet, LocalLeases Leases) Create(AdaptiveBudgetOptions? options = null)
    {
        options ??= new AdaptiveBudgetOptions { InitialBudget = 16 };
        var wake = new WakeSignal();
        var pause = new FleetPause(_time, wake);
        var telemetry = new RedisLimitTelemetry("test");
        var leases = new LocalLeases(Owner(), options.MaxBudget, _time, telemetry, pause);
        var fleet = new FleetState(options.InitialBudget, _time, pause, telemetry);
        return (new FleetBudgetController(options, _time, leases, fleet, wake), fleet, leases);
    }

    /// <summary>A limit never started (no round trip): the local leases count their permits in it.</summary>
    private RedisConcurrencyLimit Owner() => RedisConcurrencyLimit.Create(redis.Connection, new RedisLimitOptions { Key = $"test-{Guid.NewGuid():N}", Budget = 100 });
}
