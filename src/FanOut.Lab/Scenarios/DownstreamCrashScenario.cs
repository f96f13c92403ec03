using FanOut.Downstream;
using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Scenarios;

/// <summary>The downstream dies after K requests: every strategy must still finish, with the failures counted by kind and nothing hung.</summary>
public sealed class DownstreamCrashScenario : Scenario
{
    private const int Items = 500;
    private const int Capacity = 64;
    private const int Queue = 64;
    private const int CrashAfter = 200;

    /// <summary>Short, so a call the crash left hanging would show as a timeout within the run instead of stalling it.</summary>
    private static readonly TimeSpan s_callTimeout = TimeSpan.FromSeconds(2);

    /// <inheritdoc/>
    public override string Id => "downstream-crash";

    /// <inheritdoc/>
    public override string Purpose => "The server crashes mid-run: every API must finish, failures counted, nothing hung";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Parallel.ForEachAsync \"cancels that inner token when one iteration fails so the rest can bail early\"; the seeds never show what a fan-out does when the downstream itself fails.",
        "no real downstream in the seed");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{DownstreamCases.Items(size, Items, 256)} x GET /item; the server crashes on request {CrashAfter + 1} ({DownstreamCases.Describe(Server(size))}, {s_callTimeout.TotalSeconds:0} s timeout)";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var items = DownstreamCases.Items(size, Items, 256);
        var server = Server(size);
        Workload Get() => new HttpGetWorkload(server, s_callTimeout, items);
        return
        [
            new(new WhenAllStrategy(), Get, items, Policy: DownstreamCases.Quick),
            new(new ParallelForEachAsyncStrategy(), Get, items, Policy: DownstreamCases.Once),
            new(new ParallelForEachAsyncStrategy(DownstreamCases.Limit), Get, items, Policy: DownstreamCases.Quick),
        ];
    }

    private static DownstreamOptions Server(ScenarioSize size) =>
        DownstreamCases.Server(size, Capacity, Queue, 20, 80) with { CrashAfterRequests = CrashAfter };

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var finished = measured.Cases.Where(c => c.Succeeded && c.Io is not null).ToArray();
        if (finished.Length == 0)
        {
            return "No case finished.";
        }

        var parts = finished.Select(c => $"{c.Strategy} {Find.Ms(c.MeanMs)}: {DownstreamCases.Outcome(c)}");
        var timeouts = finished.Sum(c => c.Io!.FailuresTimeout);
        return $"Every strategy finished every item after the crash at request {CrashAfter + 1}, with the failures counted by kind, not thrown: {string.Join("; ", parts)}. " +
            (timeouts == 0 ? "No call waited for its timeout: a crashed loopback server refuses at once." : $"{timeouts:N0} calls per run ended at the {s_callTimeout.TotalSeconds:0} s timeout.") +
            " A body that threw instead would have stopped ForEachAsync at the first failure and left the rest undone.";
    }
}
