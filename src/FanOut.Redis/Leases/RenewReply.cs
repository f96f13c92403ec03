namespace FanOut.Redis.Leases;

/// <summary>The answer of <see cref="LeaseScripts.Renew"/>.</summary>
/// <param name="Epoch">The store's epoch after the renewal.</param>
/// <param name="Renewed">Leases that were live and got a new expiry.</param>
/// <param name="Reclaimed">Leases that were gone (expired, or lost with Redis's data) and were re-added within the budget.</param>
/// <param name="Lost">Leases that were gone and could not be re-added: the budget was full.</param>
/// <param name="Fleet">The fleet's numbers.</param>
internal readonly record struct RenewReply(string Epoch, int Renewed, int Reclaimed, IReadOnlyList<string> Lost, FleetView Fleet);
