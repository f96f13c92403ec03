using FanOut.Cli.Watch;

namespace FanOut.Cli.Tests.Watch;

/// <summary>What the watch computes from the events: rates from counts, bounded history and log, rows that go when their limit does.</summary>
public sealed class WatchModelTests
{
    [Fact]
    public void State_TwoIntervalsApart_GivesOverloadsAndPausesPerSecondFromTheCounts()
    {
        var model = new WatchModel();
        model.Apply(State(seconds: 1, overloads: 10, pauses: 1));
        model.Apply(State(seconds: 1.5, overloads: 16, pauses: 2));

        var row = Assert.Single(model.Rows);
        Assert.Equal(12, row.OverloadsPerSecond, precision: 9);
        Assert.Equal(2, row.PausesPerSecond, precision: 9);
        Assert.Equal([(8, 5), (8, 5)], row.History);
    }

    [Fact]
    public void State_NoAnswerAndNoBaseline_ShowsDashesNotZeros()
    {
        var model = new WatchModel();
        model.Apply(State(seconds: 1, latencyMs: -1, baselineMs: 0));
        var row = Assert.Single(model.Rows);
        Assert.Null(row.LatencyMs);
        Assert.Null(row.BaselineMs);
        Assert.Equal("-", WatchView.Latency(row));
    }

    [Fact]
    public void HistoryAndLog_RunLongerThanTheirLength_KeepTheNewest()
    {
        var model = new WatchModel();
        for (var i = 0; i < WatchModel.HistoryLength + 10; i++)
        {
            model.Apply(State(seconds: i, limit: i + 1));
        }

        for (var i = 0; i < WatchModel.LogLength + 10; i++)
        {
            model.Apply(new LimitChangedEvent(i, 1, "adaptive", "orders", i, i + 1, "Growth", 5, 5, 3, i + 1));
        }

        var row = Assert.Single(model.Rows);
        Assert.Equal(WatchModel.HistoryLength, row.History.Count);
        Assert.Equal(WatchModel.HistoryLength + 10, row.History.Last().Limit);
        Assert.Equal(WatchModel.LogLength, model.Log.Count);
        Assert.Equal(WatchModel.LogLength + 10, model.Log.Last().Sequence);
        Assert.Equal(model.Log.Last(), row.LastDecision);
    }

    [Fact]
    public void Row_NotPublishedForItsKeptIntervals_IsRemoved()
    {
        var model = new WatchModel();
        model.Apply(State(seconds: 0, id: 1));
        for (var i = 1; i <= WatchModel.IntervalsKeptAfterLastState + 1; i++)
        {
            model.Apply(State(seconds: i, id: 2));
            model.Apply(new IntervalClosedEvent(i, 1, 1));
            Assert.Equal(i <= WatchModel.IntervalsKeptAfterLastState ? 2 : 1, model.Rows.Count);
        }

        Assert.Equal(2, Assert.Single(model.Rows).Id);
    }

    [Fact]
    public void Select_MovesThroughTheRowsAndWraps_PreferredNameChosenFirst()
    {
        var model = new WatchModel { PreferredName = "b" };
        model.Apply(State(seconds: 0, id: 1, name: "a", inFlight: 9));
        model.Apply(State(seconds: 0, id: 2, name: "b", inFlight: 1));
        Assert.Equal("b", model.Selected!.Name);

        model.Select(1);
        Assert.Equal("a", model.Selected!.Name); // rows are busiest first: a, b; after b comes a again
        model.Select(-1);
        Assert.Equal("b", model.Selected!.Name);
    }

    [Fact]
    public void Spark_ScalesToTheTopAndLeavesZeroBlank()
    {
        Assert.Equal(" ▂▄▆█", WatchView.Spark([0, 2, 4, 6, 8], top: 8));
    }

    private static LimitStateEvent State(double seconds, long id = 1, string name = "orders", int limit = 8, int inFlight = 5, double latencyMs = 5, double baselineMs = 4, long overloads = 0, long pauses = 0) =>
        new(seconds, id, "adaptive", name, limit, inFlight, 0, latencyMs, baselineMs, overloads, pauses, 0);
}
