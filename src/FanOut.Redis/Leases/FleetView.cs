namespace FanOut.Redis.Leases;

/// <summary>What every lease script reports about the whole fleet, as Redis saw it during the script.</summary>
/// <param name="InUse">Leases held fleet-wide after the script.</param>
/// <param name="Expired">Expired leases the script purged (a crashed or partitioned client's permits coming back).</param>
/// <param name="OthersWaiting">Other clients that asked for leases and were left short within the last lease time.</param>
/// <param name="Clients">Clients active within the last lease time, this one included.</param>
internal readonly record struct FleetView(int InUse, int Expired, int OthersWaiting, int Clients);
