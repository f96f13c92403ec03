using FanOut.Redis.Infrastructure;
using FanOut.Redis.Leases;

namespace FanOut.Redis.Adaptive;

/// <summary>
/// The adaptive budget's round trips: joins the fleet, sends this process's claim (<see cref="FleetClaim"/>) when it changes
/// and every third of a lease time (a claim not sent for a lease time expires in Redis), with any pause a retry-after asked;
/// ends this process's copy of a fleet pause when its time is up, and gives parked leases back to the items here when their
/// window is over.
/// </summary>
/// <remarks>
/// A request that fails (unanswered, refused, connection lost) is kept for the next round; the loop never ends on a failure
/// (<see cref="BackgroundLoop"/>). Requests go outside the client's gate: they change the budget, not this client's leases.
/// </remarks>
internal sealed class FleetBudgetLoop(RedisLimitOptions options, FleetClaim claim, FleetPause pause, LeaseClient client, FleetState fleet, LocalLeases leases)
{
    private readonly TimeProvider _time = options.TimeProvider;
    private readonly long _refreshTicks = (long)((options.LeaseTime / 3).TotalSeconds * options.TimeProvider.TimestampFrequency);
    private BudgetRequest? _sending;
    private long _sentAt;

    public Task RunAsync(CancellationToken stop) => BackgroundLoop.RunAsync(StepAsync, OnFailure, () => options.PollInterval, _time, leases.Activity, stop);

    /// <summary>Tells Redis this process leaves: its claim no longer counts in the budget (disposal; the loop has stopped).</summary>
    public async Task WithdrawAsync()
    {
        var store = await client.Bounded(client.StoreAsync(), CancellationToken.None).ConfigureAwait(false);
        fleet.ObserveBudget((await client.Bounded(store.ClaimAsync(new BudgetRequest(BudgetRequest.Withdraw, 0)), CancellationToken.None).ConfigureAwait(false)).Budget, fleet.Generation, 0);
    }

    private async Task StepAsync(CancellationToken token)
    {
        // Parked leases whose window is over go back to the items here.
        var due = claim.TakeUnparked(out var nextUnpark);
        for (; due > 0; due--)
        {
            leases.Stock();
        }

        var untilRefresh = _time.GetElapsedTime(_time.GetTimestamp(), _sentAt + _refreshTicks);
        if (claim.TakeRequest(refresh: _sentAt == 0 || untilRefresh <= TimeSpan.Zero) is { } request)
        {
            _sending = request;
            var store = await client.Bounded(client.StoreAsync(), token).ConfigureAwait(false);
            var reply = await client.Bounded(store.ClaimAsync(request), token).ConfigureAwait(false);
            _sending = null;
            _sentAt = _time.GetTimestamp();
            fleet.ObserveBudget(reply.Budget, reply.Generation, reply.PausedMs);
            if (claim.OnReply(request, reply))
            {
                leases.PumpWake.Set(); // joined: the waiters here may ask Redis for leases
            }

            return;
        }

        var next = nextUnpark is { } unpark && unpark < untilRefresh ? unpark : untilRefresh;
        if (pause.IsActive)
        {
            if (pause.TryEnd())
            {
                // The pause is over here: serve the waiters from the idle leases, and let the acquire loop ask Redis.
                leases.Drain();
                leases.PumpWake.Set();
                return;
            }

            var remaining = pause.Remaining;
            if (remaining > TimeSpan.Zero && remaining < next)
            {
                next = remaining;
            }
        }

        await claim.Wake.WaitAsync(next, _time, token).ConfigureAwait(false);
    }

    private void OnFailure(Exception exception)
    {
        if (_sending is { } request)
        {
            _sending = null;
            claim.OnRequestFailed(request);
        }
    }
}
