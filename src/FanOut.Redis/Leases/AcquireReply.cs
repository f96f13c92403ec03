namespace FanOut.Redis.Leases;

/// <summary>The answer of <see cref="LeaseScripts.Acquire"/>.</summary>
/// <param name="Granted">Leases granted (the first that many ids sent), or -1 when the epoch changed and nothing was granted.</param>
/// <param name="Epoch">The store's epoch: it changes when Redis lost its data (a restart without persistence, a flush).</param>
/// <param name="Fleet">The fleet's numbers.</param>
internal readonly record struct AcquireReply(int Granted, string Epoch, FleetView Fleet)
{
    /// <summary>True when the client must re-register its leases (a renew) before it may acquire.</summary>
    public bool EpochChanged => Granted < 0;
}
