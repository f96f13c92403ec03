using System.Diagnostics;

using FanOut.Lab.Measurement;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Running;

/// <summary>How long a run will take, before it starts: per case, from its run time, its run policy and a child's start-up.</summary>
/// <remarks>
/// A case's time per run is its ideal time, with the CPU part of one item timed here (twice, the faster wins) for workloads
/// that compute, corrected by what the workload and strategy know: a run that stops at its first failure or at the caller's
/// cancellation, a real server's latency (<see cref="Workload.EstimateRunMs"/>, <see cref="Strategies.Strategy.EstimateRunMs"/>).
/// What no model sees (a blocking loop's thread injection) comes from the case's policy, measured
/// (<see cref="RunPolicy.MeasuredRun"/>); else a case declared long gets <see cref="UnknownLongRun"/>. CPU-bound runs are taken
/// at <see cref="SharedCoreEfficiency"/>, and a case with a set-up pays it (<see cref="Workload.EstimateSetupMs"/>). Checked
/// against a real <c>run all</c> on the 2-core VM (docs/lab.md). The progress line shows the time left as the sum of the
/// remaining cases' estimates.
/// </remarks>
/// <param name="Policy">The runner's policy (a case's own policy can only tighten it).</param>
/// <param name="CaseOverhead">What a case costs besides its runs: starting a child process, set-up, calibration.</param>
public sealed record RunEstimate(RunPolicy Policy, TimeSpan CaseOverhead)
{
    /// <summary>The guess for one run of a case declared long whose ideal time says nothing (blocking waits, real I/O).</summary>
    public static TimeSpan UnknownLongRun { get; } = TimeSpan.FromSeconds(20);

    /// <summary>What a case in a fresh child process costs besides its runs (process start, JIT, set-up), at the speed of the
    /// machine <see cref="MachineSpeed.ReferenceLoopMs"/> was timed on (the Intel Xeon 2-core VM: 14 seed000-errors cases of
    /// ~50 ms runs took 5.3-6.9 s in all; on an AMD EPYC VM of the same kind, 3.6 s).</summary>
    public static TimeSpan ChildCaseOverhead { get; } = TimeSpan.FromSeconds(0.32);

    /// <summary>How much slower this machine runs CPU work than the one the constants were measured on
    /// (<see cref="MachineSpeed.Measure"/>): scales the per-case overhead, a workload's set-up and the runs of CPU-bound
    /// workloads whose CPU part is not timed here (a workload with a set-up, such as hash-files). 1 leaves them as measured.</summary>
    public double MachineSlowdown { get; init; } = 1;

    /// <summary>The share of its ideal speed a CPU-bound run reaches on the 2-core VM with nobody else on it: 0.82-0.96 in
    /// seed001-cpu's and seed004-mixed's parallel rows (a row that is serial in disguise, a synchronous Task.WhenAll, shows
    /// ~0.49 against its parallel ideal). With other processes on the cores it fell to 0.3: CPU-bound scenarios then take
    /// up to ~1.7x their estimate (docs/lab.md).</summary>
    public const double SharedCoreEfficiency = 0.9;

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
        var idealMs = IdealTime.Milliseconds(workload.Profile, labCase.ItemCount, concurrency, Environment.ProcessorCount, cpuMs);
        var runMs = labCase.Strategy.EstimateRunMs(workload.EstimateRunMs(idealMs, concurrency), workload);
        if (labCase.Strategy.PacePerSecond is { } pace)
        {
            // A paced strategy sends no faster than its pace, whatever its concurrency would allow.
            runMs = Math.Max(runMs, labCase.ItemCount / pace * 1000);
        }

        var setupMs = workload.EstimateSetupMs * MachineSlowdown;
        if (workload.Profile.UsesCpu)
        {
            runMs /= SharedCoreEfficiency;
            if (workload is ICaseLifecycle)
            {
                // Its CPU part is not timed here (it needs the set-up's files or server): its constants are scaled instead.
                runMs *= MachineSlowdown;
            }

            // The child times the CPU part after the runs: five batches of at least 1 ms each, 20 ms at least.
            setupMs += Math.Max(20, 5 * Math.Max(1, cpuMs));
        }
        double measuredMs;
        if (policy.MeasuredRun is { } measured)
        {
            measuredMs = (policy.Warmups + policy.MinRuns) * measured.TotalMilliseconds;
        }
        else if (policy.Reason is not null || (policy.LongRun is { } longRun && runMs >= longRun.TotalMilliseconds))
        {
            measuredMs = policy.Reason is not null && runMs < (policy.LongRun ?? TimeSpan.Zero).TotalMilliseconds ? UnknownLongRun.TotalMilliseconds : runMs;

            // The runner skips the warm-up only when the ideal time already says the run is long; a run that only turns out
            // long (real I/O, whose ideal time is unknown) is found so by its warm-up, then measured once: two runs.
            if (policy.Reason is null && policy.LongRun is { } slow && idealMs < slow.TotalMilliseconds)
            {
                measuredMs += policy.Warmups * runMs;
            }
        }
        else
        {
            // A case runs until its budget is spent or it has its most runs. Tight statistics (an error within 2% of the mean)
            // rarely stop it sooner: a timer's ~1 ms jitter is over 1% of a 100 ms wait, and at 3 to 10 runs Student's t at
            // 99.9% is 31.6 down to 4.8 (on the 2-core VM, seed001-io's 100 ms cases took 1.1-1.4 s each, seed000-fanout500's
            // 200 ms cases 1.5-1.7 s: whole budgets; half a budget, the older guess, left those cases 1.4-1.7x over it).
            measuredMs = (policy.Warmups * runMs) + Math.Max(policy.MinRuns * runMs, Math.Min(policy.Budget.TotalMilliseconds, policy.MaxRuns * runMs));
        }

        return (CaseOverhead * MachineSlowdown) + TimeSpan.FromMilliseconds(setupMs + measuredMs);
    }

    private static double TimeCpuPart(Workload workload)
    {
        var started = Stopwatch.GetTimestamp();
        workload.RunCpuPart(0);
        return Stopwatch.GetElapsedTime(started).TotalMilliseconds;
    }
}
