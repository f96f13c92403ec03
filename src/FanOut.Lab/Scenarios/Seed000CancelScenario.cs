using FanOut.Lab.Outcomes;
using FanOut.Lab.Results;
using FanOut.Lab.Results.Columns;
using FanOut.Lab.Running;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 000's cancellation row: the caller cancels while N waiting items run; what stops, how fast, and what keeps running.</summary>
public sealed class Seed000CancelScenario : Scenario
{
    /// <summary>N.</summary>
    public const int Items = 100;

    private const int DelayMs = 200;
    private const int CancelAtMs = 50;
    private const int Limit = 50;

    /// <summary>Each run is short (about one item's wait) and the outcome is a count: three runs say whether it varies.</summary>
    private static readonly RunPolicy s_policy = new(1, 3, 3, TimeSpan.FromSeconds(1));

    /// <summary>The blocking loop's policy, with its cost for the duration estimate: its cold run holds every pool thread, so
    /// the cancel's timer fires late (the warm-up took 1-2 s on the 2-core VM, then one run of ~0.4 s); the model, which sees
    /// 0.25 s runs, counts its four runs at 0.5 s each.</summary>
    private static readonly RunPolicy s_blockingPolicy = s_policy with { MeasuredRun = TimeSpan.FromSeconds(0.5) };

    /// <inheritdoc/>
    public override string Id => "seed000-cancel";

    /// <inheritdoc/>
    public override string Purpose => "The caller cancels: how fast each API stops and what keeps running";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Cancellation: Parallel.ForEach and ForEachAsync take it through ParallelOptions (ForEachAsync also passes the token to the body); Task.WhenAll only cancels if the tasks you created honor a token.",
        "decision matrix, stated without measurement");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{Items} items x wait {size.Ms(DelayMs)}ms; the caller cancels {size.Ms(CancelAtMs)} ms after the call starts";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var ms = size.Ms(DelayMs);
        var cancel = CancelPlan.After(TimeSpan.FromMilliseconds(size.Ms(CancelAtMs)));
        Workload Honoring() => new FailingWorkload(Items, ms, []);
        Workload Ignoring() => new FailingWorkload(Items, ms, [], honorsToken: false);
        LabCase Case(Strategy strategy, Func<Workload> workload, string seedSays, RunPolicy? policy = null) =>
            new(new ObservedStrategy(strategy, cancel), workload, Items, seedSays, policy ?? s_policy);
        return
        [
            Case(new ParallelForEachStrategy(), Honoring, "ParallelOptions.CancellationToken", s_blockingPolicy),
            Case(new ParallelForEachAsyncStrategy(), Honoring, "ParallelOptions + token to the body"),
            Case(new ParallelForEachAsyncStrategy(Limit), Honoring, "ParallelOptions + token to the body"),
            Case(new WhenAllStrategy(), Honoring, "cancels if the tasks honor a token"),
            Case(new WhenAllStrategy(), Ignoring, "does not cancel: tasks ignore the token"),
            Case(new WhenAllWaitAsyncStrategy(), Ignoring, string.Empty),
            Case(new SemaphoreSlimWhenAllStrategy(Limit), Honoring, string.Empty),
            Case(FanOutStrategy.Fixed(Limit), Honoring, string.Empty),
        ];
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var ignoring = measured.Cases.FirstOrDefault(c => c.Succeeded && c.Strategy == "Task.WhenAll" && c.Parameters.TryGetValue("honorsToken", out var h) && h.ToString() == "0");
        var waitAsync = Find.Case(measured, "Task.WhenAll + WaitAsync(token)");
        var observed = measured.Cases.Where(c => c.Succeeded && c.Outcome is not null).ToArray();
        if (observed.Length == 0 || ignoring?.Outcome is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        static string Row(CaseResult c) =>
            $"{c.Strategy}{(c.Parameters.TryGetValue("honorsToken", out var h) && h.ToString() == "0" ? " (tasks ignore the token)" : string.Empty)} " +
            $"stopped {Find.Ms(c.Outcome!.StopMs ?? 0)} after the cancel, {CellText.Count(c.Outcome.StartedAfterTrigger)} items started after it, {c.Outcome.FinalState}";
        var leftRunning = observed.Where(c => c.Outcome!.RunningAtReturn > 0).ToArray();
        var verdict = "When the caller cancels: " + string.Join("; ", observed.Select(Row)) + ". " +
            $"Agrees that Task.WhenAll only cancels if the tasks honor the token: with tasks that ignore it, WhenAll ran every item to its end ({CellText.Count(ignoring.Outcome.Completed)} of {Items} completed, {ignoring.Outcome.FinalState}). ";
        verdict += leftRunning.Length == 0
            ? "No strategy left work running after it returned."
            : "Work left running after the call returned: " + string.Join(", ", leftRunning.Select(c => $"{c.Strategy} {CellText.Count(c.Outcome!.RunningAtReturn)} items")) +
                (waitAsync is not null && leftRunning.Contains(waitAsync) ? " (WaitAsync stops the waiting, not the work)." : ".");
        return verdict;
    }
}
