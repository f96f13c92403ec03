using FanOut.Redis.Infrastructure;
using FanOut.Redis.Leases;

namespace FanOut.Redis.Adaptive;

/// <summary>
/// The adaptive budget's round trips: sends the requests <see cref="FleetBudgetController"/> collects (one at a time, the
/// newest state each time), ends this process's copy of a fleet pause when its time is up, and gives parked leases back
/// to the items here when their window is over.
/// </summary>
/// <remarks>
/// A request that fails (unanswered, refused, connection lost) is dropped but for its pause, which the next round sends
/// again; the loop never ends on a failure (<see cref="BackgroundLoop"/>). Requests go outside the client's gate: they
/// change the budget, not this client's leases.
/// </remarks>
internal sealed class FleetBudgetLoop(RedisLimitOptions options, FleetBudgetController controller, FleetPause pause, LeaseClient client, FleetState fleet, LocalLeases leases)
{
    private readonly TimeProvider _time = options.TimeProvider;
    private BudgetRequest? _sending;

    public Task RunAsync(CancellationToken stop) => BackgroundLoop.RunAsync(StepAsync, OnFailure, () => options.PollInterval, _time, leases.Activity, stop);

    private async Task StepAsync(CancellationToken token)
    {
        // Parked leases whose window is over go back to the items here.
        var due = controller.TakeUnparked(out var nextUnpark);
        for (; due > 0; due--)
        {
            leases.Stock();
        }

        if (controller.TakeRequest() is { } request)
        {
            _sending = request;
            var store = await client.Bounded(client.StoreAsync(), token).ConfigureAwait(false);
            var reply = await client.Bounded(store.AdaptAsync(request), token).ConfigureAwait(false);
            _sending = null;
            fleet.ObserveBudget(reply.Budget, reply.Generation, reply.PausedMs);
            controller.OnReply(request, reply);
            return;
        }

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
            if (remaining > TimeSpan.Zero)
            {
                await controller.Wake.WaitAsync(nextUnpark < remaining ? nextUnpark : remaining, _time, token).ConfigureAwait(false);
            }

            return;
        }

        await controller.Wake.WaitAsync(nextUnpark, _time, token).ConfigureAwait(false);
    }

    private void OnFailure(Exception exception)
    {
        if (_sending is { } request)
        {
            _sending = null;
            controller.OnRequestFailed(request);
        }
    }
}
