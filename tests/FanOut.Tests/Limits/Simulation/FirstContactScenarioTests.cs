namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 29 item 1 on the simulation suite: a fresh adaptive limit against a hard cap with no queue, over a client that
/// pays an HTTP stack's first contact (every call sent before the first answer reaches the server 30 ms late, a later new
/// connection 1 ms late), so a rejection is not the instant "no" an in-process simulation gives: today's blind ramp
/// shows here the 49%, 28% and 7% the issue measured over HTTP.
/// </summary>
public sealed class FirstContactScenarioTests
{
    /// <summary>FanOut.Http's per-host default backs off by 0.9 (it sees every 429 of a host); the loop's default by 0.8.</summary>
    public static TheoryData<int, int, double, double> Cases() => new()
    {
        { 5, 100, 0.10, 0.8 },
        { 20, 300, 0.05, 0.8 },
        { 64, 1000, 0.05, 0.8 },
        { 5, 100, 0.10, 0.9 },
        { 20, 300, 0.05, 0.9 },
        { 64, 1000, 0.05, 0.9 },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void Adaptive_FirstContactWithAHardCap_RejectsAtMostItsShare(int capacity, int items, double maxShare, double backoffRatio)
    {
        var simulation = new LimitSimulation(DownstreamScript.Constant(new DownstreamState { Capacity = capacity, Queue = 0 }))
        {
            ColdStart = TimeSpan.FromMilliseconds(30),
            ConnectTime = TimeSpan.FromMilliseconds(1),
        };
        var limit = ConcurrencyLimit.Adaptive(simulation.Options(new AdaptiveLimitOptions { BackoffRatio = backoffRatio }));
        simulation.Run(limit, items);

        var share = (double)simulation.Rejected / simulation.Calls.Count;
        var context = $"{simulation.Rejected} of {simulation.Calls.Count} calls answered 429 ({share:P1}), peak {limit.Peak}";
        Assert.Equal(items, simulation.SucceededItems);
        Assert.True(share <= maxShare, context);
    }
}
