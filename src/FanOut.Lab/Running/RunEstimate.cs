using System.Diagnostics;

using FanOut.Lab.Measurement;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Running;

/// <summary>How long a run will take, before it starts: per case, from its ideal time, its run policy and a child's start-up.</summary>
/// <remarks>
/// A case's time per run is taken as its ideal time, with the CPU part of one item timed here (twice, the faster wins) for
/// workloads that compute. What the model cannot see (thread injection, a real server's latency) gets
/// <see cref="UnknownLongRun"/> when the case's policy says it is long. It is an estimate: the progress line shows the
/// time left as the sum of the remaining cases' estimates.
/// </remarks>
/// <param name="Policy">The runner's policy (a case's own policy can only tighten it).</param>
/// <param name="CaseOverhead">What a case costs besides its runs: starting a child process, set-up, calibration.</param>
public sealed record RunEstimate(RunPolicy Policy, TimeSpan CaseOverhead)
{
    /// <summary>The guess for one run of a case declared long whose ideal time says nothing (blocking waits, real I/O).</summary>
    public static TimeSpan UnknownLongRun { get; } = TimeSpan.FromSeconds(20);

    /// <summary>What a case in a fresh child process costs besides its runs, measured on the 2-core VM (process start, JIT, set-up).</summary>
    public static TimeSpan ChildCaseOverhead { get; } = TimeSpan.FromSeconds(0.7);

    /// <summary>The estimate of each case of <paramref name="scenario"/> at <paramref name="size"/>, in order.</summary>
    public IReadOnlyList<TimeSpan> For(Scenario scenario, ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        var cpuMs = new Dictionary<string, double>();
        return scenario.Cases(size).Select(c => ForCase(c, cpuMs)).ToArray();
    }

    private TimeSpan ForCase(LabCase labCase, Dictionary<string, double> cpuMsByWorkload)
    {
        var policy = Policy.Tighter(labCase.Policy);
        var workload = labCase.CreateWorkload();
        var cpuMs = 0.0;
        if (workload.Profile.UsesCpu && workload is not ICaseLifecycle)
        {
            var key = workload.Name + string.Join(',', workload.Parameters.Select(p => $"{p.Key}={p.Value}"));
            if (!cpuMsByWorkload.TryGetValue(key, out cpuMs))
            {
                cpuMs = cpuMsByWorkload[key] = Math.Min(TimeCpuPart(workload), TimeCpuPart(workload));
            }
        }

        var concurrency = labCase.Strategy.ConcurrencyFor(labCase.ItemCount);
        var runMs = IdealTime.Milliseconds(workload.Profile, labCase.ItemCount, concurrency, Environment.ProcessorCount, cpuMs);
        double measuredMs;
        if (policy.Reason is not null || (policy.LongRun is { } longRun && runMs >= longRun.TotalMilliseconds))
        {
            measuredMs = policy.Reason is not null && runMs < (policy.LongRun ?? TimeSpan.Zero).TotalMilliseconds ? UnknownLongRun.TotalMilliseconds : runMs;
        }
        else
        {
            // Tight statistics usually stop a case after its minimum runs; half the budget is the typical cost otherwise.
            var budgetMs = policy.TightRelativeError is null ? policy.Budget.TotalMilliseconds : policy.Budget.TotalMilliseconds / 2;
            measuredMs = (policy.Warmups * runMs) + Math.Max(policy.MinRuns * runMs, Math.Min(budgetMs, policy.MaxRuns * runMs));
        }

        return CaseOverhead + TimeSpan.FromMilliseconds(measuredMs);
    }

    private static double TimeCpuPart(Workload workload)
    {
        var started = Stopwatch.GetTimestamp();
        workload.RunCpuPart(0);
        return Stopwatch.GetElapsedTime(started).TotalMilliseconds;
    }
}
