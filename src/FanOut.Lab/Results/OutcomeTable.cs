using FanOut.Lab.Outcomes;

namespace FanOut.Lab.Results;

/// <summary>The table of seed000-errors and seed000-cancel: what the items did around the first failure or the caller's cancellation, and what the caller got.</summary>
public static class OutcomeTable
{
    /// <summary>The column headers.</summary>
    public static IReadOnlyList<string> Headers { get; } =
    [
        "Strategy", "Parameters", "Started", "Started after", "Completed", "Failed", "Canceled", "Stop time", "Running at return",
        "Final state", "First failed", "Await threw", "Exceptions reachable (canceled)", "Failures reachable", "By index", ResultTable.HeartbeatHeader, "Seed said",
    ];

    /// <summary>True for the numeric columns.</summary>
    public static bool RightAligned(int column) => column is >= 2 and <= 8 or >= 12 and <= 15;

    /// <summary>The table for <paramref name="scenario"/>.</summary>
    public static ResultTable.Table For(ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return new ResultTable.Table(Headers, scenario.Cases.Select(Row).ToArray(), RightAligned);
    }

    /// <summary>The cells of one case; a case without an outcome (or that failed) leaves them blank.</summary>
    public static IReadOnlyList<string> Row(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        var parameters = ResultTable.ParametersText(c.Parameters);
        if (!c.Succeeded || c.Outcome is not OutcomeResult o)
        {
            var blank = Enumerable.Repeat("-", Headers.Count - 4);
            return [c.Strategy, parameters, .. blank, c.Succeeded ? "no outcome" : $"FAILED: {c.Error}", c.SeedSays ?? string.Empty];
        }

        return
        [
            ResultTable.StrategyText(c),
            parameters,
            ResultTable.Count(o.ItemsStarted),
            ResultTable.Count(o.StartedAfterTrigger),
            ResultTable.Count(o.Completed),
            ResultTable.Count(o.Failed),
            ResultTable.Count(o.Canceled),
            o.StopMs is { } stop ? ResultTable.Time(stop) : "-",
            ResultTable.Count(o.RunningAtReturn),
            o.FinalState,
            o.FirstFailedItem ?? "-",
            o.Threw,
            $"{ResultTable.Count(o.ExceptionsReachable)} ({ResultTable.Count(o.CancellationsReachable)})",
            ResultTable.Count(o.FailuresReachable),
            ResultTable.Count(o.FailuresIndexedByApi),
            ResultTable.HeartbeatText(c),
            c.SeedSays ?? string.Empty,
        ];
    }
}
