using FanOut.Redis.Diagnostics;

namespace FanOut.Redis.Leases;

/// <summary>What this process last heard about the fleet (every script answers it; a <c>w:</c> message says someone is short).</summary>
internal sealed class FleetState(int budget, RedisLimitTelemetry telemetry)
{
    /// <summary>Other processes left short, as the last script answer (or a <c>w:</c> message) said.</summary>
    private int _othersWaiting;

    /// <summary>Active processes, this one included, as the last script answer said.</summary>
    private int _clients = 1;

    /// <summary>Leases held fleet-wide, as the last script answer said.</summary>
    private int _inUse;

    public bool OthersWaiting => Volatile.Read(ref _othersWaiting) != 0;

    public int InUse => Volatile.Read(ref _inUse);

    /// <summary>This process's fair share of the budget: budget / active processes, rounded up.</summary>
    public int FairShare
    {
        get
        {
            var clients = Math.Max(1, Volatile.Read(ref _clients));
            return (budget + clients - 1) / clients;
        }
    }

    public void Observe(FleetView fleet)
    {
        Volatile.Write(ref _othersWaiting, fleet.OthersWaiting);
        Volatile.Write(ref _clients, Math.Max(1, fleet.Clients));
        Observe(fleet.InUse);
        telemetry.Expired(fleet.Expired);
    }

    public void Observe(int inUse)
    {
        Volatile.Write(ref _inUse, inUse);
        telemetry.FleetInUse(inUse);
    }

    /// <summary>Another client published that it was left short.</summary>
    public void OtherWaiting() => Volatile.Write(ref _othersWaiting, 1);
}
