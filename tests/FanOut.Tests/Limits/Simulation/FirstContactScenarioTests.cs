namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 29 item 1 on the simulation suite: a fresh adaptive limit against a hard cap with no queue, over a client that
/// pays an HTTP stack's first contact (every call sent before the first answer reaches the server 30 ms late, a later new
/// connection 1 ms late), so a rejection is not the instant "no" an in-process simulation gives: today's blind ramp
/// shows here the 49%, 28% and 7% the issue measured over HTTP.
/// </summary>
public sealed class FirstContactScenarioTests
{
    /// <summary>Every place the law works (its own parameters) against each capacity.</summary>
    public static TheoryData<string, int, int, double, LatencyShape> Cases()
    {
        var cases = new TheoryData<string, int, int, double, LatencyShape>();
        foreach (var place in LawPlace.All)
        {
            foreach (var shape in new[] { LatencyShape.Steady, LatencyShape.Fixed })
            {
                cases.Add(place.Name, 5, 100, 0.10, shape);
                cases.Add(place.Name, 20, 300, 0.05, shape);
                cases.Add(place.Name, 64, 1000, 0.05, shape);
                cases.Add(place.Name, 40, 600, 0.05, shape);
                cases.Add(place.Name, 80, 1200, 0.05, shape);
            }
        }

        return cases;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void Adaptive_FirstContactWithAHardCap_RejectsAtMostItsShare(string place, int capacity, int items, double maxShare, LatencyShape shape)
    {
        var simulation = new LimitSimulation(DownstreamScript.Constant(new DownstreamState { Capacity = capacity, Queue = 0, Shape = shape }))
        {
            ColdStart = TimeSpan.FromMilliseconds(30),
            ConnectTime = TimeSpan.FromMilliseconds(1),
            CallSize = LawPlace.Named(place).CallSize,
        };
        var limit = LawPlace.Named(place).Create(simulation);
        simulation.Run(limit, items);

        var share = (double)simulation.Rejected / simulation.Calls.Count;
        var context = $"{place} {capacity} {shape}: {simulation.Rejected} of {simulation.Calls.Count} calls answered 429 ({share:P1}), peak {limit.Peak}";
        Assert.Equal(items, simulation.SucceededItems);
        Assert.True(share <= maxShare, context);
    }

    [Theory]
    [InlineData("loop", 20, 300)]
    [InlineData("loop", 64, 1000)]
    [InlineData("http", 20, 300)]
    [InlineData("http", 64, 1000)]
    public void Adaptive_ColdFirstRoundThenSlowNos_SlowStartAgainSendsLittleBlind(string place, int capacity, int items)
    {
        // A fresh process over HTTP (bench ... fresh http): a first round of 250 ms against 20 ms calls is proved cold, its
        // drain measures the pace, and slow start begins again. Its new connections open one after another (1 ms each) and a
        // "no" takes half a call (10 ms), so it comes back after most of a round's growth went out: doubling again past the
        // level the cold round reached, fresh processes sent 6-7% of their calls into 429s at a cap of 20 in 4 runs of 10, and
        // this cell read 2.6-5.1%. Above that level slow start grows one permit per two answers: 1.2-3.5%. Target: issue 29's
        // 5%, with the 15% margin. (A "no" as slow as a call, 20 ms, reads 2.2-4.8%; the law before slow start began
        // again read 0.3-1.3% in both: docs/adaptive.md, rule 2.)
        var simulation = new LimitSimulation(DownstreamScript.Constant(new DownstreamState { Capacity = capacity, Queue = 0, Shape = LatencyShape.Fixed }))
        {
            ColdStart = TimeSpan.FromMilliseconds(250),
            ConnectTime = TimeSpan.FromMilliseconds(1),
            ConnectsInSeries = true,
            RejectionTime = TimeSpan.FromMilliseconds(10),
            CallSize = LawPlace.Named(place).CallSize,
        };
        var limit = LawPlace.Named(place).Create(simulation);
        simulation.Run(limit, items);

        var share = (double)simulation.Rejected / simulation.Calls.Count;
        Assert.Equal(items, simulation.SucceededItems);
        Assert.True(share <= 0.05 / 1.15, $"{place} {capacity}: {simulation.Rejected} of {simulation.Calls.Count} calls answered 429 ({share:P1}), peak {limit.Peak}");
    }

    /// <summary>Every place against a cap that a clean slow-start round reaches exactly.</summary>
    public static TheoryData<string, int> AlignedCases() => LawPlace.NamesWith(40, 80);

    [Theory]
    [MemberData(nameof(AlignedCases))]
    public void Adaptive_RoundAnsweredAtOnceAtTheCap_SendsLittleOfItsGrowthBlind(string place, int capacity)
    {
        // A warm client (connections open) and a downstream of one fixed latency: a round's answers come back together, each
        // sends its replacement and its growth, and before the first 429 is back the whole doubling has gone over the cap
        // (over HTTP at a cap of 64: 65 of 1,000 calls refused). Slow start's growth is paced over a quarter of a round trip, so
        // the first 429 comes back while most of it has not been sent.
        var simulation = new LimitSimulation(DownstreamScript.Constant(new DownstreamState { Capacity = capacity, Queue = 0, Shape = LatencyShape.Fixed }))
        {
            ConnectTime = TimeSpan.FromMilliseconds(0.5),
            CallSize = LawPlace.Named(place).CallSize,
        };
        var limit = LawPlace.Named(place).Create(simulation);
        simulation.Run(limit, 15 * capacity);

        // Half the 5%: unpaced, the loop's, FanOut.Http's and the server's limits refuse 3.6-4.2% here (25 of 40 and 48
        // of 80 calls over the cap at once), paced 1.0-2.0%.
        var share = (double)simulation.Rejected / simulation.Calls.Count;
        var context = $"{place} {capacity}: {simulation.Rejected} of {simulation.Calls.Count} calls answered 429 ({share:P1}), peak {limit.Peak}";
        Assert.Equal(15 * capacity, simulation.SucceededItems);
        Assert.True(share <= 0.025, context);
    }

    [Theory]
    [InlineData(20)]
    [InlineData(40)]
    [InlineData(64)]
    [InlineData(80)]
    public void Adaptive_HttpGrowthOpeningConnectionsOneAtATime_SendsLittleOfItOverTheCap(int capacity)
    {
        // Over HTTP each growth request opens a connection, and on a busy machine they open one after another (64 at once:
        // 10-15 ms over loopback): the "no" to the first request over the cap comes back behind the connects granted before
        // it, while the round's 200s keep coming on open connections and growing the limit. FanOut.Http's per-host limit paces
        // slow start at one limit per round trip (SlowStartPace 1, the loop's 4), so fewer connects queue ahead of that "no".
        var simulation = new LimitSimulation(DownstreamScript.Constant(new DownstreamState { Capacity = capacity, Queue = 0, Shape = LatencyShape.Fixed }))
        {
            ColdStart = TimeSpan.FromMilliseconds(30),
            ConnectTime = TimeSpan.FromMilliseconds(0.2),
            ConnectsInSeries = true,
        };
        var limit = LawPlace.Named("http").Create(simulation);
        simulation.Run(limit, 15 * capacity);

        // Two calls and an eighth of the capacity: paced at 1, 2-4 calls refused at each cap; paced at 4 (the loop's), 7, 9, 10
        // and 24 at caps 20, 40, 64 and 80.
        var context = $"http {capacity}: {simulation.Rejected} of {simulation.Calls.Count} calls answered 429, peak {limit.Peak}";
        Assert.Equal(15 * capacity, simulation.SucceededItems);
        Assert.True(simulation.Rejected <= 2 + (capacity / 8), context);
    }
}
