namespace FanOut.Redis.Leases;

/// <summary>What every lease script reports about the whole fleet, as Redis saw it during the script.</summary>
/// <param name="InUse">Leases held fleet-wide after the script.</param>
/// <param name="Expired">Expired leases the script purged (a crashed or partitioned client's permits coming back).</param>
/// <param name="OthersWaiting">Other clients that asked for leases and were left short within the last lease time.</param>
/// <param name="Clients">Clients active within the last lease time, this one included.</param>
/// <param name="Budget">The fleet budget: the configured one, or the adaptive one Redis holds.</param>
/// <param name="Generation">The adaptive budget's generation: how many decreases it has had (0 for a fixed budget).</param>
/// <param name="PausedMs">How long the fleet stays paused by a retry-after hint, by the server's clock (0 when not paused).</param>
/// <param name="OthersStarving">Other clients left short below the floor share (see <see cref="LeaseScripts.Acquire"/>).</param>
internal readonly record struct FleetView(int InUse, int Expired, int OthersWaiting, int Clients, int Budget, long Generation, long PausedMs, int OthersStarving = 0);
