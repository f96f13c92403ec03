using Xunit.Abstractions;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 36: the adaptive law (<c>BandwidthDelayLaw</c>) against the downstream shapes, 20 seeds per cell at every place.
/// Each cell prints the worst seed and the median, and asserts the issue's target where the law meets it
/// (docs/adaptive.md, "Where it stands", has every figure, the cells it misses included).
/// </summary>
public sealed class LawShapeTests(ITestOutputHelper output)
{
    private const int Seeds = ShapeMeasurement.Seeds;
    private static readonly TimeSpan s_run = ShapeMeasurement.Run;
    private static readonly TimeSpan s_secondHalf = ShapeMeasurement.SecondHalf;

    /// <summary>The place's options.</summary>
    private static AdaptiveLimitOptions AtPlace(string place) => LawPlace.Named(place).Options;

    /// <summary>The law's throughput over Fixed(<paramref name="fixedLimit"/>)'s from <paramref name="from"/> to <paramref name="to"/>, per seed, worst first.</summary>
    private double[] ThroughputRatios(string place, DownstreamScript script, int fixedLimit, TimeSpan from, TimeSpan to, string shape)
    {
        var ratios = ShapeMeasurement.ThroughputRatios(AtPlace(place), LawPlace.Named(place).CallSize, script, fixedLimit, from, to);
        output.WriteLine($"{shape}, {place}: worst {ratios[0]:F2}, median {ratios[Seeds / 2]:F2} x Fixed({fixedLimit})");
        return ratios;
    }

    public static TheoryData<string> Places() => LawPlace.Names();

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_LatencyRisingSmoothly_FindsThePeak(string place)
    {
        // Throughput peaks at 22 in service (latency x (1 + (n/22)^2)): the band holds at 0.83-0.84x; the rate finds it.
        // Target 0.9x Fixed(22) in every seed.
        var script = DownstreamScript.Constant(new DownstreamState { Capacity = 100_000, SmoothKnee = 22 });

        Assert.True(ThroughputRatios(place, script, 22, s_secondHalf, s_run, "smooth knee")[0] >= 0.9);
    }

    [Theory]
    [InlineData("loop")]
    [InlineData("http")]
    [InlineData("server")]
    public void Law_SmoothKneeBehindAHeavyTail_NoRunCollapses(string place)
    {
        // The knee above with the heavy tail's spread, at 12, 22 and 40: the queue test needs a 3.6x rise on such a spread, so
        // slow start ran on to 55-89 and the drain then waited seconds for those calls (worst seeds 0.01-0.10x at a knee of
        // 12); slow start now grants its held-back answers less the share of the bar their cohort rose by. Target: no run
        // collapses, 0.3x Fixed(knee) in every seed with the issue's 15% margin (60 seeds: 0.38x the worst). The shared place
        // (calls of 100) still collapses (docs/adaptive.md, "Open").
        foreach (var knee in new[] { 12, 22, 40 })
        {
            Assert.True(ThroughputRatios(place, ShapeMeasurement.KneeBehindAHeavyTail(knee), knee, s_secondHalf, s_run, $"smooth knee at {knee} behind a heavy tail")[0] >= 0.3 * 1.15);
        }
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_HeavyTailWithoutOverload_KeepsThroughputFromTheFirstAnswer(string place)
    {
        // The same heavy tail judged over the first 6 s, ramp included, as the real clock's noise check judges a whole run.
        // Few answers of a heavy tail come within 1.5x of the fastest, so slow start grew on them alone and crawled (worst seed
        // 0.30-0.66x, 0.77-0.85x on the real clock); a reading whose median did not queue grants the answers held back.
        // Target 0.8x Fixed(256) in every seed.
        Assert.True(ThroughputRatios(place, ShapeMeasurement.HeavyTail, 256, TimeSpan.Zero, TimeSpan.FromSeconds(6), "heavy tail from the first answer")[0] >= 0.8);
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_HeavyTailWithoutOverload_SlowStartDoesNotEndOnAQueue(string place)
    {
        // No queue forms here. A call's first answers are its fastest and its last its slowest: read as they came, they ended
        // slow start on "queue seen" in 20 seeds of 20 at the shared place (calls of 100), 2 at the loop. Judged on cohorts of
        // items started together: 0 at the shared place and the loop, 1 over HTTP and at the server. Target: at most 3 seeds
        // of 20 at every place (the issue's margin of 2 seeds over the worst place today).
        var exits = ShapeMeasurement.SlowStartQueueExits(AtPlace(place), LawPlace.Named(place).CallSize, ShapeMeasurement.HeavyTail, TimeSpan.FromSeconds(6)).Sum();
        output.WriteLine($"heavy tail, {place}: slow start ended on a queue in {exits} seeds of {Seeds}");
        Assert.True(exits <= 3, $"{exits} seeds of {Seeds}");
    }

    [Fact]
    public void Law_CpuBoundBodiesOnTwoCores_HoldNearTheCores()
    {
        // Issue 1's CPU-bound bodies (5 ms on 2 cores): the limits suite's band is 1-3 over the last 30% of the run. A drain
        // that went deeper because its level queued used to go back to that level, and took readings to come down again (69
        // of 240 samples above 3 in one run; every seed's tail reaches 4 without it); it ends at the model's target. Target: at
        // most 3 in every seed. No margin is possible: the law's fixed point on 2 cores is 1.25 x 2 rounded up, the bar itself.
        var peaks = ShapeMeasurement.SharedCoreTailPeaks(AtPlace("loop"));
        output.WriteLine($"CPU-bound bodies on 2 cores: highest limit over the tail, worst seed {peaks[^1]}, median {peaks[Seeds / 2]}");
        Assert.True(peaks[^1] <= 3, $"worst seed {peaks[^1]}");
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_HeavyTailWithoutOverload_KeepsThroughput(string place)
    {
        // Median 40 ms, p99 ten times that, capacity never reached: the tail is not a queue. Target 0.8x Fixed(256) in every
        // seed; with the issue's 15% margin at the loop and over HTTP (the shared place's worst seed reads 0.86x).
        var margin = place is "loop" or "http" ? 1.15 : 1;

        Assert.True(ThroughputRatios(place, ShapeMeasurement.HeavyTail, 256, s_secondHalf, s_run, "heavy tail")[0] >= 0.8 * margin);
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_HeavyTailAfterAColdFirstRound_NoRunCollapses(string place)
    {
        // The same heavy tail behind a first round that takes 100 ms (connections opened). The cold round's drain ended slow
        // start, and a latency without a queue read low by chance (one cohort of 16 answers) left the target below the calls
        // in flight: the steady rule cut toward nothing, 16 of 80 runs (20 seeds at 4 places) below half Fixed(256)'s goodput
        // over 3-6 s, the worst 0.02x. Slow start now begins again after that drain: the worst seed 0.77-0.97x. Target: no
        // run below half, with the issue's 15% margin (not yet the 0.8x every seed of a warm start meets: docs/adaptive.md).
        var ratios = ShapeMeasurement.ThroughputRatios(AtPlace(place), LawPlace.Named(place).CallSize, ShapeMeasurement.HeavyTail, 256, TimeSpan.FromSeconds(3), TimeSpan.FromSeconds(6), ShapeMeasurement.ColdStart);
        output.WriteLine($"heavy tail after a cold first round, {place}: worst {ratios[0]:F2}, median {ratios[Seeds / 2]:F2} x Fixed(256)");

        Assert.True(ratios[0] >= 0.5 * 1.15, $"worst seed {ratios[0]:F2}");
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_PeriodicStallsOfTheDownstream_KeepThroughput(string place)
    {
        // A downstream of 64 (and a queue of 64) that stops for 100 ms every second (a collection, a failover): a stall is not
        // overload, and the limit must not pay for it after it has passed. Target 0.8x Fixed(64) in every seed, with the
        // issue's 15% margin.
        Assert.True(ThroughputRatios(place, IncidentScenarios.PeriodicStalls(), 64, s_secondHalf, s_run, "periodic stalls")[0] >= 0.8 * 1.15);
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_LatencyDriftWithoutOverload_KeepsThroughput(string place)
    {
        // Latency rises 10x over 5 s with room for everything (a downstream that slows, not one that is full): the readings
        // queue against the latency measured before, and the drains re-measure it. Target 0.8x Fixed(256) from 2 s to 10 s in
        // every seed, with the issue's 15% margin except at the shared place, whose calls of 100 each wait for their slowest:
        // its readings are partly idle, and read as the downstream's rate they cut it to 0.37x in its worst seed (0.84x
        // since the rate is read while the limit binds).
        var margin = place == "shared" ? 1 : 1.15;

        Assert.True(ThroughputRatios(place, ShapeMeasurement.LatencyDrift, 256, TimeSpan.FromSeconds(2), s_run, "latency drift without overload")[0] >= 0.8 * margin);
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_BimodalWithoutOverload_KeepsThroughput(string place)
    {
        // Target 0.8x Fixed(256) in every seed, with the issue's 15% margin. At the maximum the product reads a little below
        // the limit by chance, so drains spaced by answers alone came every 0.5-1 s at 5,000 answers/s (worst seed 0.86-0.94x);
        // spaced by round trips, 0.93-0.96x.
        var script = DownstreamScript.Constant(new DownstreamState { Capacity = 100_000, Shape = LatencyShape.Bimodal });

        Assert.True(ThroughputRatios(place, script, 256, s_secondHalf, s_run, "bimodal")[0] >= 0.8 * 1.15);
    }

    [Theory]
    [InlineData("loop")]
    [InlineData("http")]
    [InlineData("server")]
    public void Law_CapacityHalvesOnAHeavyTail_KeepsThroughput(string place)
    {
        // 64 -> 32 from 3 s to 6 s on a heavy tail (20 ms, p99 10x), a hard cap and then a queue as deep: the band reads its
        // fastest answers as the baseline and cuts to 4-8 (0.29-0.79x); judged from 3.5 s to 6 s against Fixed(32), target
        // 0.8x in every seed. (The shared place reads 0.73x on the hard cap in its worst seed.)
        foreach (var queue in new[] { false, true })
        {
            var ratios = ThroughputRatios(place, IncidentScenarios.HalvingOnAHeavyTail(queue), 32, IncidentScenarios.Halved + TimeSpan.FromSeconds(0.5), IncidentScenarios.HalvingRecovered, queue ? "halving on a heavy tail, queue" : "halving on a heavy tail, hard cap");
            Assert.True(ratios[0] >= 0.8);
        }
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_DownstreamThatSaysNoSlowly_RejectsFewCalls(string place)
    {
        // A cap of 32 whose "no" takes 200 ms: at most 5% of calls refused in every seed.
        var rejected = ShapeMeasurement.RefusedPercents(AtPlace(place), LawPlace.Named(place).CallSize, DownstreamScript.Constant(IncidentScenarios.HardCap(32)), TimeSpan.FromMilliseconds(200));
        output.WriteLine($"slow no, {place}: refused worst {rejected[^1]:F2}%, median {rejected[Seeds / 2]:F2}%");

        Assert.True(rejected[^1] <= 5);
    }

    public static TheoryData<string, int> PlacesAndNoLatencies() => LawPlace.NamesWith(50, 200);

    [Theory]
    [MemberData(nameof(PlacesAndNoLatencies))]
    public void Law_SlowNoThatHoldsItsPlace_NeitherCollapsesNorRefusesMuch(string place, int noMs)
    {
        // A cap of 32 whose "no" takes 50 or 200 ms and holds its place in service meanwhile (a refusal that is work of its
        // own): one call over the cap turns every call after it into a refusal until its "no" is back, and the stale "no"s
        // then took the limit to the calls in flight, themselves refusals, so to 1 (0.42-0.53x). Target: 0.8x Fixed(32) over
        // the second half in every seed (with the suite's margin, except at the shared place, whose calls of 100 each wait
        // for their refused item), at most 5% of calls refused.
        var (ratios, refused) = ShapeMeasurement.RefusalsTakingAPlace(AtPlace(place), LawPlace.Named(place).CallSize, 32, TimeSpan.FromMilliseconds(noMs), s_secondHalf);
        output.WriteLine($"slow no ({noMs} ms) holding its place, {place}: worst {ratios[0]:F2}, median {ratios[Seeds / 2]:F2} x Fixed(32); refused worst {refused[^1]:F2}%");

        Assert.True(ratios[0] >= 0.8 * (place == "shared" ? 1 : 1.15));
        Assert.True(refused[^1] <= 5);
    }

    [Theory]
    [InlineData("loop", 8)]
    [InlineData("loop", 32)]
    [InlineData("http", 8)]
    [InlineData("http", 32)]
    [InlineData("server", 8)]
    [InlineData("server", 32)]
    public void Law_CapWhose429sCarryARetryAfter_IsNotPausedByThem(string place, int capacity)
    {
        // A hard cap whose every 429 carries "Retry-After: 1": each refused probe paused every permit for a second (0.17x
        // Fixed(32) over the second half, 0.06x over the first 2 s). The hint is the refused call's: a probe asked for that
        // "no", and a pause whose test call is answered ends. Target: 0.8x Fixed(cap) over the second half and 0.7x over the
        // first 2 s in every seed, each with the suite's margin. (The shared place's calls of 100 each wait out their refused
        // item's second: 0.22x, not asserted.)
        var script = IncidentScenarios.HardCapWithRetryAfter(capacity);
        var steady = ThroughputRatios(place, script, capacity, s_secondHalf, s_run, $"cap of {capacity} with Retry-After: 1, second half");
        var first = ThroughputRatios(place, script, capacity, TimeSpan.Zero, TimeSpan.FromSeconds(2), $"cap of {capacity} with Retry-After: 1, first 2 s");

        Assert.True(steady[0] >= 0.8 * 1.15);
        Assert.True(first[0] >= 0.7 * 1.15);
    }

    [Theory]
    [InlineData("loop")]
    [InlineData("http")]
    [InlineData("server")]
    public void Law_RateLimitWithARoundTripsBucket_KeepsToTheRateAndRefusesFew(string place)
    {
        // A rate limit, not a concurrency cap: 500 calls per second from a bucket of 10 tokens (a round trip's worth at 20 ms),
        // 429 at once beyond it. Target: 0.8x the rate over the second half in every seed with the suite's margin, at most 5%
        // of calls refused. (Smaller buckets read less, a bucket of one 0.10x: docs/adaptive.md, "Open".)
        var script = DownstreamScript.Constant(new DownstreamState { Capacity = 100_000, RatePerSecond = 500, RateBurst = 10 });
        var runs = Enumerable.Range(1, Seeds).Select(seed =>
        {
            var simulation = new LimitSimulation(script, seed) { CallSize = LawPlace.Named(place).CallSize };
            simulation.Run(LawPlace.Named(place).Create(simulation), duration: s_run);
            var calls = simulation.Calls.Count(c => c.At >= s_secondHalf);
            return (Rate: simulation.Successes.Count(t => t >= s_secondHalf) / (s_run - s_secondHalf).TotalSeconds / 500, Refused: 100.0 * simulation.Calls.Count(c => c.At >= s_secondHalf && c.Rejected) / calls);
        }).ToList();
        output.WriteLine($"rate limit 500/s, bucket 10, {place}: worst {runs.Min(r => r.Rate):F2} x the rate, refused worst {runs.Max(r => r.Refused):F2}%");

        Assert.True(runs.Min(r => r.Rate) >= 0.8 * 1.15);
        Assert.True(runs.Max(r => r.Refused) <= 5);
    }

    [Theory]
    [InlineData("loop")]
    [InlineData("http")]
    [InlineData("server")]
    public void Law_IndependentClientsOnACapWhose429sCarryARetryAfter_KeepItBusy(string place)
    {
        // Two clients on a cap of 32 whose 429s carry "Retry-After: 1": a client's "no" below its own probe level (the other
        // took the room) is not its probe's, so it pauses until its test call is answered (0.07-0.11x Fixed(32) together
        // without the test). Target: together 0.6x Fixed(32) over the second half, Jain's index 0.7, in every seed, with the
        // suite's margin (without a Retry-After: 0.9 and more; docs/adaptive.md, "Open").
        var script = IncidentScenarios.HardCapWithRetryAfter(32);
        var (fairness, totals) = ShapeMeasurement.FairnessAndTotals(AtPlace(place), 2, script, 32);
        output.WriteLine($"2 clients on a cap of 32 with Retry-After: 1, {place}: Jain worst {fairness[0]:F2}, together worst {totals[0]:F2} x Fixed(32)");

        Assert.True(fairness[0] >= 0.7 * 1.15);
        Assert.True(totals[0] >= 0.6 * 1.15);
    }

    [Theory]
    [InlineData("loop", 2, 32)]
    [InlineData("loop", 4, 32)]
    [InlineData("http", 2, 32)]
    [InlineData("http", 4, 32)]
    [InlineData("server", 2, 32)]
    [InlineData("server", 4, 32)]
    [InlineData("loop", 2, 8)]
    [InlineData("server", 2, 8)]
    [InlineData("loop", 2, 4)]
    [InlineData("http", 2, 8)]
    [InlineData("http", 3, 16)]
    [InlineData("server", 3, 8)]
    public void Law_IndependentClientsOnOneCap_ShareItFairly(string place, int clients, int capacity)
    {
        // Separate services on a hard cap: Jain's index at least 0.9 in every seed. On a cap of 8 the client that lost the
        // first race was held at 1-2 by the level its stale "no"s lowered (worst seed 0.80 at the loop). On caps of 4-16 a
        // probe refused at L + 1 cut back to L, never below it, so the client holding the cap left the others no room (0.50,
        // 0.72, 0.67 before the cut from the limit less the refused call, docs/adaptive.md rule 5).
        var fairness = ShapeMeasurement.Fairness(AtPlace(place), clients, DownstreamScript.Constant(IncidentScenarios.HardCap(capacity)));
        output.WriteLine($"{clients} clients on {capacity}, {place}: Jain worst {fairness[0]:F2}, median {fairness[Seeds / 2]:F2}");

        Assert.True(fairness[0] >= 0.9);
    }

    [Theory]
    [InlineData("loop", 32)]
    [InlineData("shared", 32)]
    [InlineData("server", 32)]
    [InlineData("loop", 16)]
    [InlineData("server", 16)]
    [InlineData("http", 32)]
    [InlineData("loop", 12)]
    public void Law_ClientJoiningAFullDownstream_GetsItsShare(string place, int capacity)
    {
        // A client joining at 3 s a cap another fills: at least a quarter of the goodput (half its share) from 5 s in every
        // seed, with the issue's 15% margin. On a cap of 16 the joiner's stale "no"s held it at 1-2 (worst seed 0.17 at the
        // loop); FanOut.Http's back-off of a tenth held it at 0.20 on 32.
        var shares = ShapeMeasurement.JoinerShares(AtPlace(place), DownstreamScript.Constant(IncidentScenarios.HardCap(capacity)));
        output.WriteLine($"joiner on {capacity}, {place}: share worst {shares[0]:F2}, median {shares[Seeds / 2]:F2}");

        Assert.True(shares[0] >= 0.25 * 1.15);
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_LatencyDrift_IsFollowedNotHalvedAway(string place)
    {
        // The lab's drift: 32 slots -> 8 while the latency rises 20 -> 100 ms over 1 s, a queue of 64. At least 0.65x
        // Fixed(8)'s goodput over the next second in every seed. Cut on the latency measured before the drift, readings at
        // twice it halved the limit every time (0.33-0.57 worst, the limit 1-4 at the end); re-measured first, 0.75-0.78.
        var ratios = ShapeMeasurement.DriftRatios(AtPlace(place), LawPlace.Named(place).CallSize);
        output.WriteLine($"latency drift, {place}: worst {ratios[0]:F2}, median {ratios[Seeds / 2]:F2} x Fixed(8)");

        Assert.True(ratios[0] >= 0.65);
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_LatencyDrift_LaterDrainsJudgeTheLevelTheirReadingWasAt(string place)
    {
        // The same drift judged over the 2 s after it. A later drain began on a reading whose median a higher limit's backlog
        // had inflated (312 ms at a limit of 25); judged against the limit, its fall read as in proportion to the level's, and
        // it drained on to 2 (0.57-0.68 worst). Judged against the calls that reading had in flight, 0.77-0.83. Target 0.65x
        // Fixed(8) in every seed, as over the first second.
        var ratios = ShapeMeasurement.DriftRatios(AtPlace(place), LawPlace.Named(place).CallSize, TimeSpan.FromSeconds(3.5));
        output.WriteLine($"latency drift over 2 s, {place}: worst {ratios[0]:F2}, median {ratios[Seeds / 2]:F2} x Fixed(8)");

        Assert.True(ratios[0] >= 0.65);
    }

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_CapacityBackAfterALongLow_IsRegainedInAFewProbes(string place)
    {
        // A cap of 32 down to 4 for 1 s, then back, after a cold first contact (a drain measured the latency without a queue,
        // so the probes, not a drain, find the room): at least 0.7x Fixed(32)'s goodput over the 1.5 s after it came back in
        // every seed. One permit per passing probe read 0.57-0.59 (the lab's long low 0.53-0.55x); doubling steps 0.77-0.81.
        var ratios = ShapeMeasurement.RecoveryRatios(AtPlace(place), LawPlace.Named(place).CallSize);
        output.WriteLine($"capacity back after a long low, {place}: worst {ratios[0]:F2}, median {ratios[Seeds / 2]:F2} x Fixed(32)");

        Assert.True(ratios[0] >= 0.7);
    }

    [Theory]
    [InlineData("loop", 4, 240)]
    [InlineData("loop", 6, 90)]
    [InlineData("loop", 8, 60)]
    [InlineData("http", 6, 240)]
    [InlineData("http", 8, 90)]
    [InlineData("shared", 6, 240)]
    [InlineData("shared", 8, 120)]
    [InlineData("server", 16, 60)]
    [InlineData("server", 16, 90)]
    public void Law_ColdFirstRound_CostsOneRoundNotTheRun(string place, int capacity, int coldMs)
    {
        // The cold-start scenario's targets (ColdStartScenarioTests), in cases that fail without the cold-round rule: peaks
        // past the bar, as the backlog the cold round let in hid the downstream's pace from every later answer.
        ColdStartScenarioTests.AssertColdFirstWindowCostsOneRound(AtPlace(place), LawPlace.Named(place).CallSize, capacity, coldMs, output.WriteLine, place);
    }

    [Theory]
    [InlineData(8)]
    [InlineData(16)]
    [InlineData(64)]
    public void Law_LogNormalQueueingDownstream_MedianSeedQueuesLessThanFourFifthsOfTheCapacity(int capacity)
    {
        // A pool of C with a queue and lognormal service times (p99 4x the median): full throughput needs C in flight and
        // the rest only queue. The median seed holds 1.34-1.38x C in flight over the second half, the worst 1.50-1.75x C
        // (the target's gain of 1.25 is the room a smooth knee needs); a pool of 4, below the initial limit of 10, reads more
        // (every reference of slow start is queued there): docs/adaptive.md, "Toward one law".
        var levels = ShapeMeasurement.QueuedLevels(new AdaptiveLimitOptions(), capacity);
        output.WriteLine($"lognormal queue, capacity {capacity}: in flight worst {levels[^1]:F2}, median {levels[Seeds / 2]:F2} x C");
        Assert.True(levels[Seeds / 2] <= 1.8, $"median seed {levels[Seeds / 2]:F2} x C");

        // A drain's answers still out count as the slowest; when the spread of the latency without a queue was read from the
        // upper quartile, those answers made it infinite and the target the maximum: 3 seeds of 20 at C = 64 held 256.
        Assert.True(levels[^1] <= 2.5, $"worst seed {levels[^1]:F2} x C");
    }

    [Fact]
    public void Law_CallerThatDoesNotReportStarts_MeasuresTheLatencyWithoutAQueue()
    {
        // A drain's cohort is the first items started after it began, counted as answers plus calls in flight, so a caller
        // that never calls RecordStart (a RateLimiter lease, a hand-written loop) reads the same latency as the fan-out does.
        // Counted from answers alone, the cohort was the drain's first answers, its fastest (median seed 18.8 ms; counted
        // from starts 20.7-21.0). A pool of 32 with a queue, 20 ms median, p99 4x (drains go to three quarters of the pool,
        // below its queue): the median seed within 0.95-1.1x of 20 ms. Each seed's figure is one cohort's median (48-64
        // answers, a standard error of about a tenth in logs): every seed within three standard errors, 0.75-1.35x.
        var baselines = ShapeMeasurement.QueuedBaselines(32, items: 6400);

        output.WriteLine($"latency without a queue, no starts reported: least {baselines[0]:F1} ms, median {baselines[Seeds / 2]:F1} ms, most {baselines[^1]:F1} ms");
        Assert.InRange(baselines[Seeds / 2], 19, 22);
        Assert.All(baselines, ms => Assert.InRange(ms, 15, 27));
    }

    [Theory]
    [InlineData(8)]
    [InlineData(16)]
    public void Law_DrainsOfDifferentSizes_PoolTheLatencyWithoutAQueue(int capacity)
    {
        // Drains at different levels take cohorts of different sizes (16-64 answers), and the pool of 64 keeps the last ones.
        // When it was a ring filled with each cohort sorted, a larger cohort overwrote an older one's fastest answers and kept
        // its slowest (and those still out): 26.8 ms for cohorts whose medians read 21.0 and 22.6 (the mean over 20 seeds 22.8-23.0
        // ms, one seed 29.1; evenly spaced ranks kept: 20.6-21.1, most 25.3). A pool of C with a queue, 20 ms median, p99 4x, long
        // enough for several drains: the mean over the seeds within 0.95-1.1x of 20 ms (its standard error is about 0.35 ms), and
        // every seed within three standard errors of one cohort's median, 0.75-1.35x.
        var baselines = ShapeMeasurement.QueuedBaselines(capacity, items: 800 * capacity);

        output.WriteLine($"latency without a queue after several drains, pool of {capacity}: {string.Join(" ", baselines.Select(b => b.ToString("F1")))} ms");
        Assert.InRange(baselines.Average(), 19, 22);
        Assert.All(baselines, ms => Assert.InRange(ms, 15, 27));
    }

    [Theory]
    [InlineData("loop", 8)]
    [InlineData("loop", 32)]
    [InlineData("server", 8)]
    [InlineData("server", 32)]
    public void Law_PoolThatRefusedThenQueues_HoldsTheQueueDown(string place, int capacity)
    {
        // A pool of C (40 ms) that refuses what it cannot serve for 5 s, then queues it. The "no" ended slow start before any
        // drain measured the latency without a queue, and the probes above the level that said no all passed: the limit ran
        // to its maximum, 256 in flight on a pool of 8. A passed probe with nothing measured drains (worst seed 1.35-1.55x C).
        // Target over the last 30 s, in every seed: a queue no longer than the pool (the limit within 2x C) and 0.95x the
        // pool's throughput.
        var seeds = ShapeMeasurement.RefusedThenQueued(AtPlace(place), capacity);
        var worstLimit = seeds.Max(s => s.Limit);
        var worstThroughput = seeds.Min(s => s.Throughput);
        output.WriteLine($"refused then queued, {place}, C {capacity}: limit worst {worstLimit:F2} x C, throughput worst {worstThroughput:F2} x the pool's");
        Assert.True(worstLimit <= 2 && worstThroughput >= 0.95, $"limit {worstLimit:F2} x C, throughput {worstThroughput:F2}");
    }

    [Theory]
    [InlineData("loop")]
    [InlineData("http")]
    [InlineData("server")]
    [InlineData("shared")]
    public void Law_SlowDegradationWithQueueing_FollowsItDown(string place)
    {
        // Over 30 s the capacity falls 64 -> 8 while latency rises 20 -> 200 ms, and the downstream queues. The most answers
        // per second remembered is then the past: the limit came down a permit or two per reading and ended at 1.9-3.3x C in
        // the worst seed. A reading that queued (twice the latency without a queue) keeps only its own rate: 1.38-1.63x C.
        // Target: in flight over the last 2 s within 2x the last capacity in every seed, with the issue's 15% margin.
        var levels = ShapeMeasurement.DegradedLevels(AtPlace(place), LawPlace.Named(place).CallSize);
        output.WriteLine($"slow degradation, {place}: in flight at the end worst {levels[^1]:F2}, median {levels[Seeds / 2]:F2} x C");
        Assert.True(levels[^1] <= 2 / 1.15, $"worst seed {levels[^1]:F2} x C");
    }

    [Theory]
    [InlineData(0.0, 6.0, false)]
    [InlineData(0.3, 7.0, false)]
    [InlineData(2.0, 20.0, true)]
    [InlineData(0.0, 20.0, true)]
    public void Law_AnswerFasterThanTheNoiseFloor_ProvesAFirstRoundColdOnlyWhenThatRoundWasSlowerThanFourFloors(double answerMs, double firstRoundMs, bool endsSlowStart)
    {
        // On the real clock a body whose wait was under a millisecond answers in 0.0 ms; counted as it is, it made a warm
        // first round of 6 ms look four times too slow and ended slow start on an elastic downstream. An answer counts at no
        // less than the noise floor (2 ms), so only a first round slower than 8 ms can be proved cold.
        var law = AfterAFirstRound(firstRoundMs);

        // Three such answers: one alone may be a heavy tail's luck (ColdAnswers).
        for (var i = 0; i < 3; i++)
        {
            Answer(law, answerMs, atMs: firstRoundMs + 10 + i);
        }

        Assert.Equal(endsSlowStart ? FanOut.Limits.Adaptive.BandwidthDelayPhase.Draining : FanOut.Limits.Adaptive.BandwidthDelayPhase.SlowStart, law.Phase);
    }

    [Fact]
    public void Law_OneAnswerFourTimesFasterThanTheFirstRound_DoesNotProveItCold()
    {
        // A heavy tail (p99 10x the median): one answer in hundreds beats the fastest of a first round of ten by 4x. On the
        // real clock that one answer ended slow start in about one run in three (0.79-0.82x Fixed(256) in those rounds).
        var law = AfterAFirstRound(40);
        Answer(law, 5, atMs: 60);
        for (var i = 0; i < 5; i++)
        {
            Answer(law, 40, atMs: 80 + i);
        }

        Assert.Equal(FanOut.Limits.Adaptive.BandwidthDelayPhase.SlowStart, law.Phase);
    }

    [Fact]
    public void Law_ColdFirstRound_DrainsThenSlowStartsAgainFromTheInitialLimit()
    {
        // What slow start read in a cold round measured the start-up: the drain measures the pace, then slow start begins again
        // from the initial limit (docs/adaptive.md, rule 2), where the steady rule cut a heavy tail toward nothing.
        var (law, atMs) = AfterAColdRoundProved();

        Assert.Equal(FanOut.Limits.Adaptive.BandwidthDelayPhase.Draining, law.Phase);
        Assert.True(law.Limit < new AdaptiveLimitOptions().InitialLimit, $"drained to {law.Limit}");

        for (var i = 0; i < 200 && law.Phase == FanOut.Limits.Adaptive.BandwidthDelayPhase.Draining; i++)
        {
            Answer(law, 5, atMs++);
        }

        Assert.Equal(FanOut.Limits.Adaptive.BandwidthDelayPhase.SlowStart, law.Phase);
        Assert.Equal(new AdaptiveLimitOptions().InitialLimit, law.Limit);
    }

    [Fact]
    public void Law_NoDuringTheColdRoundsDrain_EndsSlowStartForGood()
    {
        // A "no" ends slow start whatever the drain under way would have handed over to: the drains after it (here the one a
        // passed probe starts, since no drain measured the latency without a queue) hand over to the steady rule.
        var (law, atMs) = AfterAColdRoundProved();

        law.OnAnswer(start: Ticks(atMs - 5), Ticks(5), succeeded: false, overload: true, inFlight: law.Limit, Ticks(atMs));
        var drained = false;
        for (var i = 0; i < 3000; i++)
        {
            Answer(law, 5, atMs += 0.5);
            drained |= law.Phase == FanOut.Limits.Adaptive.BandwidthDelayPhase.Draining;
            Assert.NotEqual(FanOut.Limits.Adaptive.BandwidthDelayPhase.SlowStart, law.Phase);
        }

        Assert.True(drained, "no drain after the probes passed");
    }

    [Theory]
    [InlineData(0.5, 0, 0.2)]
    [InlineData(200, 5.76, 5.9)]
    [InlineData(600_000, 60, 60.2)]
    public void Law_FirstProbeAfterASlowNo_WaitsWhatARefusedProbeWouldCost(double noMs, double leastSeconds, double mostSeconds)
    {
        // Answers of 20 ms with the limit's worth in flight (at most 16), then one "no" of noMs. A "no" faster than an answer
        // leaves the probes to their round trips; a slower one holds the first probe 32 times its excess over an answer
        // (32 x 180 ms), and a client's timeout of 10 minutes no longer than the longest pause the limit honours (1 minute).
        var law = new FanOut.Limits.Adaptive.BandwidthDelayLaw(new AdaptiveLimitOptions { MaxLimit = 16 });
        var atMs = 0.0;
        while (atMs < 1_000)
        {
            Answer(law, 20, atMs += 20.0 / law.Limit);
        }

        var noAtMs = atMs;
        law.OnAnswer(start: Ticks(noAtMs - noMs), Ticks(noMs), succeeded: false, overload: true, inFlight: law.Limit, Ticks(noAtMs));
        double? probedAtMs = null;
        while (probedAtMs is null && atMs < noAtMs + 120_000)
        {
            atMs += 20.0 / law.Limit;
            var decision = law.OnAnswer(start: Ticks(atMs - 20), Ticks(20), succeeded: true, overload: false, inFlight: law.Limit, Ticks(atMs));
            probedAtMs = decision.Reason == LimitChangeReason.Probe ? atMs : null;
        }

        var waited = (probedAtMs!.Value - noAtMs) / 1000;
        output.WriteLine($"a \"no\" of {noMs} ms: the first probe {waited:F2} s after it");
        Assert.InRange(waited, leastSeconds, mostSeconds);
    }

    /// <summary>A law whose first round answered after 100 ms and three 5 ms answers then proved that round cold, and the time (ms) of its next answer.</summary>
    private static (FanOut.Limits.Adaptive.BandwidthDelayLaw Law, double AtMs) AfterAColdRoundProved()
    {
        var law = AfterAFirstRound(100);
        var atMs = 110.0;
        for (var i = 0; i < 3; i++)
        {
            Answer(law, 5, atMs++);
        }

        return (law, atMs);
    }

    /// <summary>A law at the default options whose first round (all its initial permits, started at 0) answered after <paramref name="roundMs"/>.</summary>
    private static FanOut.Limits.Adaptive.BandwidthDelayLaw AfterAFirstRound(double roundMs)
    {
        var options = new AdaptiveLimitOptions();
        var law = new FanOut.Limits.Adaptive.BandwidthDelayLaw(options);
        var first = options.InitialLimit;
        for (var i = 0; i < first; i++)
        {
            law.OnAnswer(start: 0, Ticks(roundMs), succeeded: true, overload: false, inFlight: first - i, now: Ticks(roundMs) + i);
        }

        return law;
    }

    /// <summary>One success of <paramref name="latencyMs"/>, answered at <paramref name="atMs"/> with the limit's worth of calls in flight.</summary>
    private static void Answer(FanOut.Limits.Adaptive.BandwidthDelayLaw law, double latencyMs, double atMs) =>
        law.OnAnswer(start: Ticks(atMs - latencyMs), Ticks(latencyMs), succeeded: true, overload: false, inFlight: law.Limit, Ticks(atMs));

    private static long Ticks(double ms) => (long)(ms * TimeProvider.System.TimestampFrequency / 1000);

    [Theory]
    [MemberData(nameof(Places))]
    public void Law_RecoveryAfterALongLow_IsBackToHalfTheCapacityWithinThreeSeconds(string place)
    {
        // The incident suite's long low (64 -> 4 for a long while -> 64): without probes that come sooner with twice the step
        // once one passed, growth above the level that said no is one permit per probe and takes longer than 3 s.
        var simulation = new LimitSimulation(IncidentScenarios.LongLow()) { CallSize = LawPlace.Named(place).CallSize };
        simulation.Run(ConcurrencyLimit.Adaptive(simulation.Options(AtPlace(place))), duration: IncidentScenarios.LongLowRun);

        IncidentScenarios.AssertLongLow(simulation.Timeline, simulation.Calls, output.WriteLine, $"{place}: ");
    }
}
