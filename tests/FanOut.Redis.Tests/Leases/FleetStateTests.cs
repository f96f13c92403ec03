using FanOut.Redis.Diagnostics;
using FanOut.Redis.Leases;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Redis.Tests.Leases;

/// <summary>What a process believes about the fleet between script answers.</summary>
public sealed class FleetStateTests
{
    [Fact]
    public void OtherWaiting_WhenTheLastAnswerSaidOneClient_HalvesTheFairShare()
    {
        // The first process took all 8 leases before the others registered: its last answer said 1 client, a fair share of 8.
        var fleet = new FleetState(8, new FakeTimeProvider(), pause: null, new RedisLimitTelemetry("test"));
        Assert.Equal(8, fleet.FairShare);

        fleet.OtherWaiting();

        Assert.True(fleet.OthersWaiting);
        Assert.Equal(4, fleet.FairShare); // at least two clients now: it hands leases back as its items finish
    }
}
