using FanOut.Redis.Diagnostics;
using FanOut.Redis.Infrastructure;

namespace FanOut.Redis.Leases;

/// <summary>Every third of the lease time, renews the leases held here (re-adding any Redis lost, while the budget has room).</summary>
/// <remarks>
/// A renewal that fails (unanswered, refused, connection lost) is retried after a tenth of the lease time, not a third:
/// a lease renewed at time t lives until t + lease time, so a pause shorter than about two thirds of it loses nothing. A
/// failure never ends the loop (<see cref="BackgroundLoop"/>).
/// </remarks>
internal sealed class LeaseRenewalLoop(RedisLimitOptions options, LocalLeases leases, LeaseClient client, FleetState fleet, RedisLimitTelemetry telemetry)
{
    private readonly TimeSpan _every = options.LeaseTime / 3;
    private readonly TimeSpan _retry = options.LeaseTime / 10;

    public Task RunAsync(CancellationToken stop) => BackgroundLoop.RunAsync(StepAsync, OnFailure, () => _retry, options.TimeProvider, leases.Activity, stop);

    /// <summary>Renews every lease held here; the caller holds the client's gate (<see cref="LeaseClient.SerializedAsync{T}"/>).</summary>
    public async Task<bool> RenewUnderGateAsync(LeaseStore store, CancellationToken cancellationToken)
    {
        var ids = leases.SnapshotHeld();
        var sentAt = System.Diagnostics.Stopwatch.GetTimestamp();
        var reply = await client.Bounded(store.RenewAsync(client.Epoch, ids), cancellationToken).ConfigureAwait(false);
        client.Epoch = reply.Epoch;
        fleet.Observe(reply.Fleet);
        telemetry.Renewed(reply.Renewed + reply.Reclaimed);
        if (reply.Lost.Count > 0)
        {
            leases.DropLost(reply.Lost);
        }

        // Leases granted after the snapshot were granted after sentAt: all live at least a lease time from it.
        leases.LiveFrom(sentAt, options.LeaseTime);

        return true;
    }

    private async Task StepAsync(CancellationToken token)
    {
        // Renew first, then sleep: after a failure the backoff (a tenth of the lease time) leads straight to the next try.
        if (leases.HeldCount > 0)
        {
            await client.SerializedAsync(RenewUnderGateAsync, token).ConfigureAwait(false);
        }

        await leases.Activity.DelayAsync(_every, options.TimeProvider, token).ConfigureAwait(false);
    }

    private void OnFailure(Exception exception) => telemetry.Unavailable();
}
