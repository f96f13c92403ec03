using FanOut.Downstream;
using FanOut.Downstream.Latency;
using FanOut.Lab.Probing;
using FanOut.Lab.Tests.Strategies;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Lab.Tests.Probing;

/// <summary>The open-loop check: constant arrivals, latency from the intended start, and the queue's trend.</summary>
[Collection(SequentialCollection.Name)]
[Trait(SerialTests.Category, SerialTests.Serial)]
public sealed class OpenLoopRunnerTests(Xunit.Abstractions.ITestOutputHelper output)
{
    [Theory]
    [InlineData(0, 0, 12, false)]
    [InlineData(1, 3, 12, false)]
    [InlineData(1, 5, 12, true)]
    [InlineData(0, 2, 2, false)]
    [InlineData(0, 2.5, 2, true)]
    public void QueueGrew_LateBacklogOverEarlyByMoreThanAQuarterOfTheLimit(double early, double late, int limit, bool grew) =>
        Assert.Equal(grew, OpenLoopRunner.QueueGrew(early, late, limit));

    [Theory]
    [InlineData(0, false)]
    [InlineData(7, false)]
    [InlineData(70, false)]
    [InlineData(71, true)]
    [InlineData(400, true)]
    public void FellBehind_ScheduleLaterThanTenTimesAQuietHostsTimerLateness(double lateMs, bool fellBehind) =>
        Assert.Equal(fellBehind, OpenLoopRunner.FellBehind(lateMs));

    [Fact]
    public async Task RunAsync_ClockJumpsPastArrivals_ReportsHowLateTheScheduleWent()
    {
        // A starved client: its clock moves 300 ms at a time while the scheduler waits, so the arrivals due meanwhile go
        // out late, in a burst. (A busy test host may move the clock twice before the scheduler looks: later, never earlier.)
        // The server takes 2 of the 4 sent at once and refuses the rest, so the check fails, and its verdict says the client
        // fell behind.
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 2, Queue = 0, Latency = LatencySpec.Parse("fixed:50") });
        var clock = new FakeTimeProvider();
        var target = new ProbeTarget(new ProbeSettings { Url = new Uri(server.BaseAddress, "item/1") });
        var run = new OpenLoopRunner(target, new RequestBudget(null), clock).RunAsync(50, 4, TimeSpan.FromSeconds(1), 1_000, null, CancellationToken.None);
        while (!run.IsCompleted)
        {
            clock.Advance(TimeSpan.FromMilliseconds(300));
            await Task.WhenAny(run, Task.Delay(10));
        }

        var result = await run;
        output.WriteLine(result.ToString());
        Assert.Equal(50, result.Scheduled);
        Assert.True(result.ScheduleLateMs >= 280, $"{result.ScheduleLateMs} ms late");
        Assert.True(OpenLoopRunner.FellBehind(result.ScheduleLateMs));
        Assert.False(result.Holds);
        Assert.Contains("the client's own schedule ran up to", result.Verdict, StringComparison.Ordinal);
    }

    [Fact]
    public void Thirds_RisingBacklog_LateAboveEarly()
    {
        var (early, late) = OpenLoopRunner.Thirds([0, 0, 1, 2, 3, 4, 5, 6, 7]);
        Assert.Equal(1.0 / 3, early, 9);
        Assert.Equal(6, late, 9);
    }

    [Fact]
    public async Task RunAsync_UnderCapacity_HoldsAndMeasuresFromTheIntendedStart()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 4, Queue = 0, Latency = LatencySpec.Parse("fixed:20") });

        // 50/s against 4 slots of 20 ms (200/s) holds. A loaded machine can starve the client and read a queue that is its
        // own; it cannot make an overloaded server read as holding. So a run that reads "grew" is run again (up to 5), and
        // the first run that holds is judged: the retry can confirm the right answer, never make a wrong one right.
        var result = await Run(server, perSecond: 50, limit: 4);
        for (var attempt = 1; !result.Holds && attempt < 5; attempt++)
        {
            output.WriteLine($"run {attempt}: {result.Verdict}");
            server.ResetStats();
            result = await Run(server, perSecond: 50, limit: 4);
        }

        Assert.True(result.Holds, result.Verdict);
        Assert.Equal(25, result.Scheduled);
        Assert.Equal(25, result.Ok);
        Assert.InRange(result.LatencyP50Ms!.Value, 20, 1_000);
        Assert.True(result.LatencyP99Ms >= result.ServiceP99Ms);
        Assert.StartsWith("held: 25 arrivals at 50/s", result.Verdict, StringComparison.Ordinal);
    }

    [Fact]
    public async Task RunAsync_OverCapacity_TheQueueGrowsAndTheCorrectedLatencyShowsIt()
    {
        // Two slots of 20 ms carry at most 100/s; 300/s arrive. Measured from the send, a call still takes ~20 ms
        // (what a closed loop would report); from the intended start, the wait behind the queue counts.
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 2, Queue = 0, Latency = LatencySpec.Parse("fixed:20") });
        var result = await Run(server, perSecond: 300, limit: 2);
        output.WriteLine(result.ToString());
        Assert.False(result.Holds);
        Assert.Equal(0, result.Failures.Values.Sum());
        Assert.StartsWith("the queue grew", result.Verdict, StringComparison.Ordinal);
        Assert.True(result.BacklogLate > result.BacklogEarly + 2, $"{result.BacklogEarly} -> {result.BacklogLate}");
        // Medians: in a fresh test process the first calls pay JIT and connection set-up, which moves a p99 of 150.
        Assert.True(result.LatencyP50Ms > 10 * result.ServiceP50Ms, $"median {result.LatencyP50Ms} from the intended start, {result.ServiceP50Ms} from the send");
    }

    private static Task<OpenLoopResult> Run(DownstreamServer server, double perSecond, int limit)
    {
        var target = new ProbeTarget(new ProbeSettings { Url = new Uri(server.BaseAddress, "item/1") });
        var runner = new OpenLoopRunner(target, new RequestBudget(null), TimeProvider.System);
        return runner.RunAsync(perSecond, limit, TimeSpan.FromMilliseconds(500), 1_000, null, CancellationToken.None);
    }
}
