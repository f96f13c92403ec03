using FanOut.Redis.Diagnostics;
using FanOut.Redis.Infrastructure;

namespace FanOut.Redis.Leases;

/// <summary>
/// Hands back to Redis the leases a finished item released over the fair share (at once), the idle leases that lingered
/// unused, and the orphans (ids of rounds given up on, releases that failed).
/// </summary>
/// <remarks>A release that fails keeps its ids as orphans and is tried again after a poll interval; it never ends the loop.</remarks>
internal sealed class LeaseReturnLoop(RedisLimitOptions options, LocalLeases leases, LeaseClient client, FleetState fleet, RedisLimitTelemetry telemetry)
{
    public Task RunAsync(CancellationToken stop) => BackgroundLoop.RunAsync(StepAsync, OnFailure, () => options.PollInterval, options.TimeProvider, leases.Activity, stop);

    private async Task StepAsync(CancellationToken token)
    {
        await leases.ReturnWake.WaitAsync(null, options.TimeProvider, token).ConfigureAwait(false);
        if (leases.LingerArmed && options.Linger > TimeSpan.Zero)
        {
            await leases.Activity.DelayAsync(options.Linger, options.TimeProvider, token).ConfigureAwait(false);
        }

        var ids = leases.TakeToReturn(out var held);
        telemetry.LeasesHeld(-held);
        if (ids.Count > 0)
        {
            try
            {
                fleet.Observe(await client.CallAsync(store => store.ReleaseAsync(ids), token).ConfigureAwait(false));
            }
            catch
            {
                // No longer held here, and maybe still leased in Redis: keep them for the next try (or for disposal).
                leases.AddOrphans(ids);
                throw;
            }
        }

        if (leases.Idle > 0)
        {
            leases.ArmLinger();
        }
    }

    private void OnFailure(Exception exception) => leases.ReturnWake.Set(); // after the backoff, the orphans are tried again
}
