using System.Diagnostics;
using System.Globalization;

namespace FanOut.Redis.FleetWorker.Soak;

/// <summary>A Redis fault the soak injects.</summary>
public enum SoakFault
{
    /// <summary><c>CLIENT PAUSE 2000 ALL</c>.</summary>
    Pause,

    /// <summary><c>CLIENT PAUSE</c> for 1.5-2.5 lease times.</summary>
    LongPause,

    /// <summary>redis-server killed, 0.2-1 s down, started again empty (data lost).</summary>
    Restart,

    /// <summary>A worker with items running killed with SIGKILL (its leases are checked to come back within one lease time, plus a stall's shift), then replaced.</summary>
    KillWorker,

    /// <summary><c>maxmemory 1</c> with <c>noeviction</c> for 0.5-2 s: every script that writes is refused with <c>OOM</c>.</summary>
    OutOfMemory,

    /// <summary>A late joiner: a new worker starts while the others hold the budget, and the oldest worker leaves (it is told to finish).</summary>
    Join,

    /// <summary>redis-server restarted (data lost) while a new worker starts: the joiner's first script before the restart or after it, at random; the oldest leaves.</summary>
    RestartJoin,

    /// <summary>With <see cref="FleetSoakOptions.Sentinel"/>: <c>SENTINEL FAILOVER</c> promotes the replica (the old primary becomes its replica).</summary>
    Failover,

    /// <summary>With <see cref="FleetSoakOptions.Sentinel"/>: the primary killed (SIGKILL); the sentinels promote the replica; the old one comes back empty as its replica.</summary>
    KillPrimary,
}

/// <summary>What <see cref="FleetSoak.RunAsync"/> runs.</summary>
public sealed record FleetSoakOptions
{
    /// <summary>How long faults are injected; the run goes on until every fault kind was injected at least once.</summary>
    public TimeSpan Duration { get; init; } = TimeSpan.FromMinutes(1);

    /// <summary>Worker processes sharing the budget.</summary>
    public int Workers { get; init; } = 3;

    /// <summary>The shared budget.</summary>
    public int Budget { get; init; } = 8;

    /// <summary>The lease time: a long pause is longer than it.</summary>
    public TimeSpan LeaseTime { get; init; } = TimeSpan.FromSeconds(3);

    /// <summary>0: <c>WhenUnavailable = Fail</c>; above 0: <c>FallBackToLocal</c> with this <c>FallbackLimit</c>.</summary>
    public int FallbackLimit { get; init; }

    /// <summary>Each item holds its permit for 1 to this many milliseconds.</summary>
    public int HoldMs { get; init; } = 10;

    /// <summary>Pause between one fault's end and the next one's start, drawn from this range.</summary>
    public (TimeSpan Min, TimeSpan Max) Gap { get; init; } = (TimeSpan.FromMilliseconds(500), TimeSpan.FromSeconds(2));

    /// <summary>The fault kinds injected: by default every kind that fits (<see cref="SentinelKinds"/> with <see cref="Sentinel"/>, the others without).</summary>
    public IReadOnlyList<SoakFault>? Kinds { get; init; }

    /// <summary>
    /// Run against a <see cref="LocalSentinelGroup"/> (a primary, a replica, three sentinels; the workers connect through the
    /// sentinels) instead of one redis-server: the faults are then <see cref="SentinelKinds"/>.
    /// </summary>
    public bool Sentinel { get; init; }

    /// <summary>
    /// Above 0: every item start also takes a permit of a <c>RedisRateLimiter</c> at this fleet rate per second (burst: the
    /// budget), and the referee checks the starts over the run against <c>burst x (1 + restarts) + rate x (seconds + 1)</c>,
    /// the seconds from the first start to the last by the referee's clock, one more for the delays of the reports (a
    /// restart loses the rate's state: a burst more).
    /// </summary>
    public int Rate { get; init; }

    /// <summary>The workers' <c>ReplicaAcknowledgements</c> (<c>WAIT</c> after lease-granting scripts, 500 ms timeout); 0 for none.</summary>
    public int ReplicaAcknowledgements { get; init; }

    /// <summary>The kinds a sentinel deployment takes (a restart of the only server makes no sense there; a pause longer than the sentinels' down-after is a failover).</summary>
    public static IReadOnlyList<SoakFault> SentinelKinds { get; } = [SoakFault.Failover, SoakFault.KillPrimary, SoakFault.KillWorker, SoakFault.Join, SoakFault.OutOfMemory];

    /// <summary>The kinds injected: <see cref="Kinds"/>, or every kind that fits the deployment.</summary>
    public IReadOnlyList<SoakFault> FaultKinds => Kinds ?? (Sentinel ? SentinelKinds : [.. Enum.GetValues<SoakFault>().Except(SentinelKinds).Concat([SoakFault.KillWorker, SoakFault.Join, SoakFault.OutOfMemory]).Distinct().OrderBy(k => k)]);

    /// <summary>Seed of the fault sequence.</summary>
    public int Seed { get; init; } = Environment.TickCount & int.MaxValue;

    /// <summary>
    /// The most items that may run at once across the fleet: the budget under <c>Fail</c>; with <c>FallBackToLocal</c>,
    /// the budget plus every process's fallback limit (leases still live while each process also runs its fallback).
    /// </summary>
    public int Bound => Budget + (FallbackLimit > 0 ? Workers * FallbackLimit : 0);
}

/// <summary>What a soak saw.</summary>
public sealed record FleetSoakResult
{
    public required TimeSpan Elapsed { get; init; }

    public required IReadOnlyDictionary<SoakFault, int> Faults { get; init; }

    public required long Items { get; init; }

    public required long Interrupted { get; init; }

    public required long GivenBack { get; init; }

    public required IReadOnlyDictionary<string, long> FailedRuns { get; init; }

    public required int Peak { get; init; }

    /// <summary>Leases the workers' renewals found gone and could not re-add (their items ran on without one).</summary>
    public required long LeasesLost { get; init; }

    public required int Bound { get; init; }

    public required long AboveBound { get; init; }

    public required long Twice { get; init; }

    public required long Lost { get; init; }

    /// <summary>Killed workers whose leases were not all expired (by the server's clock) one lease time after the kill, plus what the lease scripts' stall rule added (<see cref="KilledWorkerLeases"/>).</summary>
    public required long LeasesNotBack { get; init; }

    /// <summary>The latest a killed worker's lease was due to expire, after the kill, in milliseconds, not counting a stall's shift (at most the lease time).</summary>
    public required long WorstLeaseBackMs { get; init; }

    /// <summary>Workers that did not exit within the time allowed at the end, or exited with an error.</summary>
    public required int WorkersFailed { get; init; }

    /// <summary>Waits of a worker with items to start beyond the starvation bound while the others ran (<see cref="SoakCounter.Starved"/>).</summary>
    public required long Starved { get; init; }

    /// <summary>The longest a worker with items waited for a permit while the others ran a budget of items or more (<see cref="SoakCounter.WorstWaitMs"/>).</summary>
    public required long WorstWaitMs { get; init; }

    /// <summary>With <see cref="FleetSoakOptions.Rate"/>: item starts over the run, and the most the rate allows (0 without a rate).</summary>
    public required (long Starts, long Bound, double Seconds) Rated { get; init; }

    /// <summary>1 when the starts went above the rate's bound.</summary>
    public long AboveRate => Rated.Bound > 0 && Rated.Starts > Rated.Bound ? 1 : 0;

    /// <summary>The starvation bound the referee used.</summary>
    public required TimeSpan StarveAfter { get; init; }

    public required IReadOnlyList<string> Findings { get; init; }

    public long Violations => AboveBound + Twice + Lost + Starved + LeasesNotBack + WorkersFailed + AboveRate;

    /// <summary>One line: faults per kind, items, violations.</summary>
    public override string ToString()
    {
        var faults = string.Join(", ", Enum.GetValues<SoakFault>().Select(k => $"{Name(k)} {Faults.GetValueOrDefault(k)}"));
        var failed = FailedRuns.Count == 0 ? "0" : string.Join(", ", FailedRuns.Select(p => $"{p.Value:N0} {p.Key}"));
        var rate = Rated.Bound == 0 ? string.Empty : string.Create(CultureInfo.InvariantCulture, $"rate: {Rated.Starts:N0} starts in {Rated.Seconds:F1} s = {Rated.Starts / Rated.Seconds:F1}/s, bound {Rated.Bound:N0}; ");
        return string.Create(CultureInfo.InvariantCulture, $"{Elapsed.TotalSeconds:F0} s: faults {faults}; {rate}items {Items:N0} (re-run after a kill {Interrupted:N0}, given back by failed runs {GivenBack:N0}); failed runs: {failed}; peak {Peak} of {Bound}; leases lost at renewal {LeasesLost}; killed worker's leases back within {WorstLeaseBackMs} ms; longest wait for a permit while others ran {WorstWaitMs} ms (starved above {StarveAfter.TotalMilliseconds:F0} ms); violations {Violations}: above bound {AboveBound}, twice {Twice}, lost {Lost}, starved {Starved}, leases not back {LeasesNotBack}, workers failed {WorkersFailed}{(Rated.Bound == 0 ? string.Empty : $", above the rate {AboveRate}")}");
    }

    /// <summary>The fault's name on the command line and in the output.</summary>
    public static string Name(SoakFault fault) => fault switch
    {
        SoakFault.Pause => "pause",
        SoakFault.LongPause => "long-pause",
        SoakFault.Restart => "restart",
        SoakFault.KillWorker => "kill",
        SoakFault.Join => "join",
        SoakFault.RestartJoin => "restart-join",
        SoakFault.Failover => "failover",
        SoakFault.KillPrimary => "kill-primary",
        _ => "oom",
    };
}

/// <summary>
/// Worker processes (this assembly, <c>--soak</c>) sharing one budget against a private redis-server while random faults are
/// injected one at a time; a <see cref="SoakCounter"/> outside Redis counts what runs.
/// </summary>
public static class FleetSoak
{
    private const string Key = "soak";
    private static readonly TimeSpan s_endTimeout = TimeSpan.FromSeconds(30);

    /// <summary>Runs the soak; <paramref name="progress"/> gets a line per fault.</summary>
    public static async Task<FleetSoakResult> RunAsync(FleetSoakOptions options, TextWriter progress, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(progress);
        var random = new Random(options.Seed);
        var clock = Stopwatch.StartNew();
        var faults = Enum.GetValues<SoakFault>().ToDictionary(k => k, _ => 0);
        long leasesNotBack = 0, worstBackMs = 0;
        var workersFailed = 0;
        var findings = new List<string>();
        var kinds = options.FaultKinds;
        var misplaced = kinds.Where(k => options.Sentinel ? k is SoakFault.Restart or SoakFault.RestartJoin or SoakFault.Pause or SoakFault.LongPause : k is SoakFault.Failover or SoakFault.KillPrimary).ToList();
        if (misplaced.Count > 0)
        {
            throw new ArgumentException($"{string.Join(", ", misplaced.Select(FleetSoakResult.Name))} do not fit {(options.Sentinel ? "a sentinel deployment" : "one redis-server")}: choose from {string.Join(", ", (options.Sentinel ? FleetSoakOptions.SentinelKinds : new FleetSoakOptions().FaultKinds).Select(FleetSoakResult.Name))}.", nameof(options));
        }

        await using var sentinel = options.Sentinel ? await LocalSentinelGroup.StartAsync().ConfigureAwait(false) : null;
        await using var server = options.Sentinel ? null : await LocalRedisServer.StartAsync().ConfigureAwait(false);
        var endpoint = sentinel?.Configuration ?? server!.Endpoint;
        async Task<int> PortAsync() => sentinel is null ? server!.Port : await sentinel.PrimaryPortAsync().ConfigureAwait(false);
        // A joiner may wait out a restart's grace (a lease time) and a poll before its first permit: starved beyond three.
        var starveAfter = TimeSpan.FromMilliseconds(Math.Max(3000, 3 * options.LeaseTime.TotalMilliseconds));
        await using var counter = new SoakCounter(options.Bound, starveAfter);
        counter.Start();
        var workers = new List<Process>();
        try
        {
            for (var i = 0; i < options.Workers; i++)
            {
                workers.Add(StartWorker(options, endpoint, counter));
            }

            // Every kind once first (shuffled), then at random.
            var order = new Queue<SoakFault>(kinds.Distinct().OrderBy(_ => random.Next()));
            while (!cancellationToken.IsCancellationRequested && (clock.Elapsed < options.Duration || order.Count > 0))
            {
                await Task.Delay(Between(random, options.Gap.Min, options.Gap.Max), cancellationToken).ConfigureAwait(false);
                var fault = order.Count > 0 ? order.Dequeue() : kinds[random.Next(kinds.Count)];
                counter.FaultBegins();
                string what;
                try
                {
                    what = await InjectAsync(fault).ConfigureAwait(false);
                }
                finally
                {
                    counter.FaultEnds();
                }

                faults[fault]++;
                await progress.WriteLineAsync(string.Create(CultureInfo.InvariantCulture, $"  {clock.Elapsed.TotalSeconds,6:F1} s  {FleetSoakResult.Name(fault)} {what}  items {counter.Done:N0}, peak {counter.Peak}")).ConfigureAwait(false);
            }

            counter.End();
            foreach (var worker in workers)
            {
                using var wait = new CancellationTokenSource(s_endTimeout);
                try
                {
                    await worker.WaitForExitAsync(wait.Token).ConfigureAwait(false);
                    if (worker.ExitCode != 0)
                    {
                        workersFailed++;
                        findings.Add($"worker {worker.Id} exited with {worker.ExitCode}");
                    }
                }
                catch (OperationCanceledException)
                {
                    workersFailed++;
                    findings.Add($"worker {worker.Id} did not finish within {s_endTimeout.TotalSeconds} s of the end");
                }
            }
        }
        finally
        {
            foreach (var worker in workers)
            {
                if (!worker.HasExited)
                {
                    worker.Kill(entireProcessTree: true);
                    await worker.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
                }

                worker.Dispose();
            }
        }

        // Connections close as the workers exit: let the counter settle them.
        await counter.DisposeAsync().ConfigureAwait(false);
        // The rate's span is the referee's, from the first start to the last, plus a second for the reports' own delays.
        var rateSeconds = counter.StartSpan.TotalSeconds + 1;
        var burst = Math.Max(1, options.Budget);
        var rated = options.Rate > 0
            ? (counter.Starts, (long)Math.Ceiling((burst * (1 + faults[SoakFault.Restart] + faults[SoakFault.RestartJoin])) + (options.Rate * rateSeconds)), rateSeconds)
            : (counter.Starts, 0L, rateSeconds);
        if (rated.Item2 > 0 && rated.Item1 > rated.Item2)
        {
            findings.Add($"{rated.Item1} starts in {rateSeconds:F1} s, above the rate's bound of {rated.Item2}");
        }

        findings.AddRange(counter.Findings);
        return new FleetSoakResult
        {
            Elapsed = clock.Elapsed,
            Faults = faults,
            Items = counter.Done,
            Interrupted = counter.Interrupted,
            GivenBack = counter.GivenBack,
            FailedRuns = counter.Failures,
            Peak = counter.Peak,
            LeasesLost = counter.LeasesLost,
            Bound = options.Bound,
            AboveBound = counter.AboveBound,
            Twice = counter.Twice,
            Lost = counter.Lost,
            LeasesNotBack = leasesNotBack,
            WorstLeaseBackMs = worstBackMs,
            WorkersFailed = workersFailed,
            Starved = counter.Starved,
            WorstWaitMs = counter.WorstWaitMs,
            StarveAfter = starveAfter,
            Rated = rated,
            Findings = findings,
        };

        async Task<string> InjectAsync(SoakFault fault)
        {
            switch (fault)
            {
                case SoakFault.Pause:
                case SoakFault.LongPause:
                    var pause = fault == SoakFault.Pause ? TimeSpan.FromSeconds(2) : options.LeaseTime * Between(random, 1.5, 2.5);
                    var ms = ((long)pause.TotalMilliseconds).ToString(CultureInfo.InvariantCulture);
                    await RedisAdmin.SendAsync(await PortAsync().ConfigureAwait(false), "CLIENT", "PAUSE", ms, "ALL").ConfigureAwait(false);
                    await Task.Delay(pause, cancellationToken).ConfigureAwait(false);
                    return $"{ms} ms";
                case SoakFault.Restart:
                    var down = TimeSpan.FromMilliseconds(random.Next(200, 1000));
                    await server!.RestartAsync(down).ConfigureAwait(false);
                    return $"{down.TotalMilliseconds:F0} ms down";
                case SoakFault.Failover:
                    var promoted = await sentinel!.FailoverAsync().ConfigureAwait(false);
                    var now = await PortAsync().ConfigureAwait(false);
                    return string.Create(CultureInfo.InvariantCulture, $"primary now {now}, promoted and synchronized in {promoted.TotalMilliseconds:F0} ms");
                case SoakFault.KillPrimary:
                    var took = await sentinel!.KillPrimaryAsync().ConfigureAwait(false);
                    var newPrimary = await PortAsync().ConfigureAwait(false);
                    return string.Create(CultureInfo.InvariantCulture, $"primary now {newPrimary}, promoted and old one back as its replica in {took.TotalMilliseconds:F0} ms");
                case SoakFault.OutOfMemory:
                    var full = TimeSpan.FromMilliseconds(random.Next(500, 2000));
                    var port = await PortAsync().ConfigureAwait(false);
                    await RedisAdmin.SendAsync(port, "CONFIG", "SET", "maxmemory-policy", "noeviction").ConfigureAwait(false);
                    await RedisAdmin.SendAsync(port, "CONFIG", "SET", "maxmemory", "1").ConfigureAwait(false);
                    await Task.Delay(full, cancellationToken).ConfigureAwait(false);
                    await RedisAdmin.SendAsync(port, "CONFIG", "SET", "maxmemory", "0").ConfigureAwait(false);
                    return $"{full.TotalMilliseconds:F0} ms";
                case SoakFault.Join:
                    var joiner = StartWorker(options, endpoint, counter);
                    workers.Add(joiner);
                    await WaitJoinedAsync(joiner).ConfigureAwait(false);
                    return $"worker {joiner.Id} joined; {await RetireOldestAsync().ConfigureAwait(false)}";
                case SoakFault.RestartJoin:
                    var gone = TimeSpan.FromMilliseconds(random.Next(200, 1000));
                    string order;
                    Process late;
                    if (random.Next(2) == 0)
                    {
                        // The joiner first: it has connected (and may hold leases) when Redis loses its data.
                        late = StartWorker(options, endpoint, counter);
                        workers.Add(late);
                        await WaitJoinedAsync(late).ConfigureAwait(false);
                        await server!.RestartAsync(gone).ConfigureAwait(false);
                        order = "joiner first";
                    }
                    else
                    {
                        // The joiner last: it starts while Redis is down, and meets the restarted server first as a new client.
                        server!.Kill();
                        late = StartWorker(options, endpoint, counter);
                        workers.Add(late);
                        await Task.Delay(gone, cancellationToken).ConfigureAwait(false);
                        await server!.StartAgainAsync().ConfigureAwait(false);
                        order = "joiner last";
                    }

                    return $"{gone.TotalMilliseconds:F0} ms down, worker {late.Id} joined ({order}); {await RetireOldestAsync().ConfigureAwait(false)}";
                default:
                    return await KillAsync().ConfigureAwait(false);
            }
        }

        async Task WaitJoinedAsync(Process joiner)
        {
            for (var waited = 0; !counter.HasJoined(joiner.Id) && !joiner.HasExited && waited < 30_000; waited += 20)
            {
                await Task.Delay(20, cancellationToken).ConfigureAwait(false);
            }
        }

        // The oldest worker leaves: told to finish at its next batch, it must exit on its own with every item ended.
        async Task<string> RetireOldestAsync()
        {
            var oldest = workers[0];
            counter.Retire(oldest.Id);
            using var wait = new CancellationTokenSource(s_endTimeout);
            try
            {
                await oldest.WaitForExitAsync(wait.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                workersFailed++;
                findings.Add($"worker {oldest.Id}, retired, did not exit within {s_endTimeout.TotalSeconds} s");
                return $"worker {oldest.Id} did not leave";
            }

            workers.Remove(oldest);
            if (oldest.ExitCode != 0)
            {
                workersFailed++;
                findings.Add($"worker {oldest.Id}, retired, exited with {oldest.ExitCode}");
            }

            var text = $"worker {oldest.Id} left";
            oldest.Dispose();
            return text;
        }

        async Task<string> KillAsync()
        {
            // A worker with items running holds leases (or is about to renew them): kill the busiest.
            var victim = workers.MaxBy(w => counter.RunningIn(w.Id))!;
            var pid = victim.Id;
            var running = counter.RunningIn(pid);
            counter.Killing(pid);
            victim.Kill(entireProcessTree: true); // SIGKILL: no lease is returned
            await victim.WaitForExitAsync(cancellationToken).ConfigureAwait(false);
            var primary = await PortAsync().ConfigureAwait(false);

            // Redis runs what a client sent before it drops the client: once the killed worker's connection is gone, every
            // renewal it sent has run, and the kill's time is read after them (beside two busy loops, a renewal sent before
            // the kill ran 114 ms after the process had exited).
            var name = string.Create(CultureInfo.InvariantCulture, $"name=fleet-worker-{pid} ");
            for (var polls = 0; polls < 500 && (await RedisAdmin.SendAsync(primary, "CLIENT", "LIST").ConfigureAwait(false)).Any(l => l.Contains(name, StringComparison.Ordinal)); polls++)
            {
                await Task.Delay(10, cancellationToken).ConfigureAwait(false);
            }

            // Watch its leases (by the server's clock) until they are due: within one lease time, later only by a stall's shift.
            var judge = await KilledWorkerLeases.StartAsync(primary, pid, Key, options.LeaseTime).ConfigureAwait(false);
            while (judge.Watching)
            {
                await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                await judge.ObserveAsync(primary).ConfigureAwait(false);
            }

            worstBackMs = Math.Max(worstBackMs, judge.BackMs);
            if (judge.Finding is { } finding)
            {
                leasesNotBack++;
                findings.Add(finding);
            }

            workers.Remove(victim);
            victim.Dispose();
            workers.Add(StartWorker(options, endpoint, counter));
            var shifted = judge.ShiftedMs == 0 ? string.Empty : string.Create(CultureInfo.InvariantCulture, $" and {judge.ShiftedMs} ms more by a stall's shift");
            return string.Create(CultureInfo.InvariantCulture, $"worker {pid} with {running} items running, {judge.Held} leases, due back {judge.BackMs} ms after the kill{shifted}");
        }
    }

    private static Process StartWorker(FleetSoakOptions options, string endpoint, SoakCounter counter)
    {
        var info = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "FanOut.Redis.FleetWorker.dll"));
        foreach (var argument in new[]
        {
              "--redis", endpoint, "--key", Key, "--budget", Text(options.Budget), "--lease-ms", Text((int)options.LeaseTime.TotalMilliseconds),
            "--hold-ms", Text(options.HoldMs), "--fallback", Text(options.FallbackLimit), "--soak", Text(counter.Port),
            "--replica-acks", Text(options.ReplicaAcknowledgements), "--soak-rate", Text(options.Rate), "--burst", Text(Math.Max(1, options.Budget)),
        })
        {
            info.ArgumentList.Add(argument);
        }

        var process = Process.Start(info) ?? throw new InvalidOperationException("dotnet did not start");
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;

        static string Text(int value) => value.ToString(CultureInfo.InvariantCulture);
    }

    private static TimeSpan Between(Random random, TimeSpan min, TimeSpan max) => min + ((max - min) * random.NextDouble());

    private static double Between(Random random, double min, double max) => min + ((max - min) * random.NextDouble());
}
