using System.Globalization;

using FanOut.Redis.Infrastructure;

namespace FanOut.Redis.Leases;

/// <summary>
/// While workers wait (or items run without a lease), leases from Redis in batches and hands the leases to the waiters in
/// order; then waits for a release message, a new waiter or the jittered poll.
/// </summary>
/// <remarks>
/// A round that fails, for whatever reason (an unanswered script, a lost connection, a refusal such as <c>OOM</c>), applies
/// <see cref="RedisLimitOptions.WhenUnavailable"/> to the waiters through <see cref="UnavailableHandler"/>. Until the next poll
/// is due, new waiters get the same answer at once, without another round trip: a known outage costs each acquisition
/// nothing, and Redis is tried again every poll.
/// </remarks>
internal sealed class LeaseAcquireLoop(RedisLimitOptions options, LocalLeases leases, LeaseClient client, FleetState fleet, LeaseRenewalLoop renewal, UnavailableHandler unavailable)
{
    private readonly TimeProvider _time = options.TimeProvider;
    private long _nextLeaseNumber;

    /// <summary>The last round's failure, until a round succeeds.</summary>
    private Exception? _failure;

    /// <summary>When Redis is tried again after <see cref="_failure"/> (a timestamp of the options' clock).</summary>
    private long _retryAt;

    /// <summary>After a round left waiters short (the budget full): when the poll is due (a timestamp of the options' clock); 0 otherwise.</summary>
    private long _shortUntil;

    /// <summary>The fleet budget when the last round left waiters short.</summary>
    private int _shortBudget;

    public Task RunAsync(CancellationToken stop) => BackgroundLoop.RunAsync(StepAsync, OnFailure, static () => TimeSpan.Zero, _time, leases.Activity, stop);

    private async Task StepAsync(CancellationToken token)
    {
        if (leases.WaiterCount == 0 && leases.Unbacked == 0)
        {
            await leases.PumpWake.WaitAsync(null, _time, token).ConfigureAwait(false);
            return;
        }

        if (_failure is { } failure)
        {
            var untilRetry = _time.GetElapsedTime(_time.GetTimestamp(), _retryAt);
            if (untilRetry > TimeSpan.Zero)
            {
                // Redis is known unreachable: answer the new waiters now, as the last round did, and try Redis when the poll is due.
                unavailable.Apply(failure);
                await leases.PumpWake.WaitAsync(untilRetry, _time, token).ConfigureAwait(false);
                return;
            }
        }

        // Consumed before every round: a release heard while the round is in flight stays for the next look.
        var released = fleet.TakeReleaseHeard();
        if (_shortUntil != 0)
        {
            // The last round found the budget full. A new waiter here changes nothing in Redis: asking again before a lease
            // went back (an r message), the budget moved or the poll is due would be a round trip per item that grants
            // nothing, and under contention it is what most round trips were (0.15-0.5 per item in a fleet of four).
            var untilPoll = _time.GetElapsedTime(_time.GetTimestamp(), _shortUntil);
            // A process already holding its fair share while others wait would only have to hand a won lease back: it leaves
            // the released lease to those below their share instead of racing them (with 16 processes, every release
            // otherwise cost 15 round trips, 14 of which granted nothing).
            var held = leases.HeldCount;
            var worthAsking = released && !(fleet.OthersWaiting && held >= fleet.FairShare) && !(fleet.OthersStarving && held >= Math.Max(1, fleet.FloorShare));
            if (untilPoll > TimeSpan.Zero && !worthAsking && fleet.Budget == _shortBudget && leases.Unbacked == 0)
            {
                await leases.PumpWake.WaitAsync(untilPoll, _time, token).ConfigureAwait(false);
                return;
            }
        }

        var complete = await RoundAsync(token).ConfigureAwait(false);
        _failure = null;
        _shortUntil = 0;
        if (!complete)
        {
            var poll = Jittered();
            _shortUntil = _time.GetTimestamp() + (long)(poll.TotalSeconds * _time.TimestampFrequency);
            _shortBudget = fleet.Budget;
            await leases.PumpWake.WaitAsync(poll, _time, token).ConfigureAwait(false);
        }
    }

    private void OnFailure(Exception exception)
    {
        _failure = exception;
        _shortUntil = 0;
        _retryAt = _time.GetTimestamp() + (long)(Jittered().TotalSeconds * _time.TimestampFrequency);
        unavailable.Handle(exception);
    }

    /// <summary>One round trip for up to a batch of leases (two more when Redis lost its data: re-register first).</summary>
    /// <returns>True when Redis granted everything asked for (so more waiters may be served at once).</returns>
    private async Task<bool> RoundAsync(CancellationToken token)
    {
        if (leases.Idle > 0 && !leases.IsLive)
        {
            // Idle leases held back (the connection failed, or a renewal is overdue): a renewal says which Redis still has,
            // re-registering them after a restart, and serves the waiters from those; then ask for what is still missing.
            await client.SerializedAsync(renewal.RenewUnderGateAsync, token).ConfigureAwait(false);
            if (leases.WaiterCount == 0 && leases.Unbacked == 0)
            {
                return true;
            }
        }

        // Items running without a lease (fallback, or lost) are registered first, so Redis counts what really runs.
        var waiting = leases.WaiterCount;
        var budget = fleet.Budget;
        var forWaiters = waiting == 0 ? 0 : Math.Max(waiting, Math.Min(options.BatchSize, budget));
        var want = Math.Min(leases.Unbacked + forWaiters, budget - leases.HeldCount);
        if (want <= 0)
        {
            return false;
        }

        var ids = new string[want];
        for (var i = 0; i < ids.Length; i++)
        {
            ids[i] = string.Create(CultureInfo.InvariantCulture, $"{client.ClientId}:{Interlocked.Increment(ref _nextLeaseNumber)}");
        }

        // With no lease held here before, the granted ones are all there is: they live a lease time from now.
        var sentAt = leases.HeldCount == 0 ? System.Diagnostics.Stopwatch.GetTimestamp() : 0;
        AcquireReply reply;
        try
        {
            reply = await client.SerializedAsync(
                async (store, ct) =>
                {
                    var answer = await client.Bounded(store.AcquireAsync(client.Epoch, ids, leases.HeldCount), ct).ConfigureAwait(false);
                    if (answer.EpochChanged)
                    {
                        // Redis lost its data (or this is the first call): re-register what we hold before asking for more.
                        await renewal.RenewUnderGateAsync(store, ct).ConfigureAwait(false);
                        answer = await client.Bounded(store.AcquireAsync(client.Epoch, ids, leases.HeldCount), ct).ConfigureAwait(false);
                    }

                    return answer;
                },
                token).ConfigureAwait(false);
        }
        catch
        {
            // The script may still run in Redis after we gave up on it: release these ids once Redis answers.
            leases.AddOrphans(ids);
            throw;
        }

        fleet.Observe(reply.Fleet);
        if (reply.Granted > 0)
        {
            if (sentAt != 0)
            {
                leases.LiveFrom(sentAt, options.LeaseTime);
            }

            leases.AddGranted(ids.AsSpan(0, reply.Granted));
        }

        return reply.Granted == want;
    }

    /// <summary>The poll interval, jittered to 50-150 %.</summary>
    private TimeSpan Jittered() => options.PollInterval * (0.5 + Random.Shared.NextDouble());
}
