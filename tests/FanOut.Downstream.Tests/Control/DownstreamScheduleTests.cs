using FanOut.Downstream.Control;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Downstream.Tests.Control;

/// <summary><c>fanout serve --schedule</c>: the text form, and steps applied at their times on a fake clock.</summary>
public class DownstreamScheduleTests
{
    [Fact]
    public void TryParse_Steps_ReadsTimesAndSettingsInOrder()
    {
        Assert.True(DownstreamSchedule.TryParse("500ms capacity=16 phase=halved; 1.5s capacity=32 queue=8 ; 2s storm=1", out var schedule, out var error), error);

        Assert.Equal([TimeSpan.FromMilliseconds(500), TimeSpan.FromSeconds(1.5), TimeSpan.FromSeconds(2)], schedule!.Steps.Select(s => s.At));
        Assert.Equal(new DownstreamChange { Capacity = 16, Phase = "halved" }, schedule.Steps[0].Change);
        Assert.Equal(new DownstreamChange { Capacity = 32, Queue = 8 }, schedule.Steps[1].Change);
        Assert.Equal(TimeSpan.FromSeconds(1), schedule.Steps[2].Change.RetryAfterStorm);
        Assert.Equal("0.5s phase=halved capacity=16; 1.5s capacity=32 queue=8; 2s storm=1", schedule.ToString());
    }

    [Theory]
    [InlineData("", "the schedule is empty: use " + DownstreamSchedule.ValidForm + ".")]
    [InlineData("5 capacity=16", "step 1 '5 capacity=16': the time '5' is not a time from the start: use " + DownstreamSchedule.ValidForm + ".")]
    [InlineData("5s capacity=16; 2s capacity=32", "step 2 '2s capacity=32': its time comes before the step before it: list the steps in time order.")]
    [InlineData("5s capacity", "step 1 '5s capacity': 'capacity' is not SETTING=VALUE: valid settings are " + DownstreamChange.ValidSettings + ".")]
    [InlineData("1s capacity=0", "step 1 '1s capacity=0': capacity must be in [1, 10000]; got 0.")]
    [InlineData("1s", "step 1 '1s': no setting given: valid settings are " + DownstreamChange.ValidSettings + ".")]
    public void TryParse_BadStep_OneLineNamingItAndTheValidForm(string text, string expected)
    {
        Assert.False(DownstreamSchedule.TryParse(text, out var schedule, out var error));
        Assert.Null(schedule);
        Assert.Equal(expected, error);
    }

    [Fact]
    public async Task RunAsync_FakeClock_AppliesEachStepWhenItsTimeComes()
    {
        var time = new FakeTimeProvider();
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 32 });
        Assert.True(DownstreamSchedule.TryParse("1s capacity=16 phase=halved; 3s capacity=32 phase=recovered", out var schedule, out _));

        var running = schedule!.RunAsync(server, time, CancellationToken.None);

        Assert.Equal(DownstreamServer.StartPhase, server.CurrentPhase);
        time.Advance(TimeSpan.FromSeconds(1));
        await TestServer.WaitUntilAsync(() => server.CurrentPhase == "halved", "The step was never applied (the schedule's continuation runs on the thread pool after the fake clock fires).");
        Assert.Equal(16, server.CurrentCapacity);
        time.Advance(TimeSpan.FromSeconds(1.9));
        Assert.Equal("halved", server.CurrentPhase);              // not yet: 2.9 s
        time.Advance(TimeSpan.FromSeconds(0.1));
        await running.WaitAsync(TestServer.ClientTimeout);
        Assert.Equal(("recovered", 32), (server.CurrentPhase, server.CurrentCapacity));
    }
}
