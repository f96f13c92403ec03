using System.Globalization;

using StackExchange.Redis;

namespace FanOut.Redis.Leases;

/// <summary>
/// The limit's subscription to its budget's channel: a release (<c>r</c>) wakes the acquire loop; another client left short
/// (<c>w:id</c>) or starving (<c>s:id</c>, below the floor share) starts handing spare leases back; an adaptive budget that moved (<c>b:budget:generation</c>) or a fleet
/// pause (<c>p:ms</c>) is taken in at once.
/// </summary>
/// <remarks>
/// Subscribed once, and never waited for: an acquisition does not depend on it (the jittered poll covers a missing
/// subscription), so a subscription that waits in the connection's backlog cannot hold up the first acquisition.
/// StackExchange.Redis keeps the handler registered and subscribes again after each reconnect.
/// </remarks>
internal sealed class ReleaseSubscription
{
    private readonly LeaseClient _client;
    private readonly LocalLeases _leases;
    private readonly FleetState _fleet;
    private readonly Action<RedisChannel, RedisValue> _handler;
    private int _started;
    private int _stopped;

    public ReleaseSubscription(LeaseClient client, LocalLeases leases, FleetState fleet)
    {
        _client = client;
        _leases = leases;
        _fleet = fleet;
        _handler = OnMessage;
    }

    /// <summary>Subscribes in the background (once); a failure is observed and left to the connection's reconnects.</summary>
    public void Start()
    {
        if (Interlocked.Exchange(ref _started, 1) == 0)
        {
            _ = SubscribeAsync();
        }
    }

    /// <summary>Unsubscribes this limit's handler, within the client's bound.</summary>
    public async Task UnsubscribeAsync(CancellationToken cancellationToken)
    {
        Volatile.Write(ref _stopped, 1);
        if (Volatile.Read(ref _started) != 0 && _client.ConnectionIfReady is { } connection)
        {
            await _client.Bounded(connection.GetSubscriber().UnsubscribeAsync(_client.Channel, _handler), cancellationToken).ConfigureAwait(false);
        }
    }

    private async Task SubscribeAsync()
    {
        try
        {
            var connection = await _client.ConnectionAsync().ConfigureAwait(false);
            await connection.GetSubscriber().SubscribeAsync(_client.Channel, _handler).ConfigureAwait(false);
            if (Volatile.Read(ref _stopped) != 0)
            {
                // Disposal unsubscribed before this subscription landed: take the handler off (it would keep the limit alive).
                await connection.GetSubscriber().UnsubscribeAsync(_client.Channel, _handler).ConfigureAwait(false);
            }
        }
        catch (Exception)
        {
            // Redis unreachable (or the connection disposed): the poll covers it, and a reconnect subscribes again.
        }
    }

    private void OnMessage(RedisChannel channel, RedisValue message)
    {
        var text = (string?)message;
        if (text == "r")
        {
            _fleet.ReleaseHeard();
            if (_leases.WaiterCount != 0)
            {
                _leases.PumpWake.Set();
            }
        }
        else if (text is not null && (text.StartsWith("w:", StringComparison.Ordinal) || text.StartsWith("s:", StringComparison.Ordinal)) && !text.AsSpan(2).SequenceEqual(_client.ClientId))
        {
            if (text[0] == 's')
            {
                _fleet.OtherStarving();
            }
            else
            {
                _fleet.OtherWaiting();
            }

            if (_leases.Idle > 0)
            {
                _leases.ArmLinger();
            }
        }
        else if (text is not null && text.StartsWith("b:", StringComparison.Ordinal))
        {
            var parts = text.Split(':');
            if (parts.Length == 3 && int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var budget)
                && long.TryParse(parts[2], NumberStyles.None, CultureInfo.InvariantCulture, out var generation))
            {
                _fleet.ObserveBudget(budget, generation, 0);
            }
        }
        else if (text is not null && text.StartsWith("p:", StringComparison.Ordinal)
            && long.TryParse(text.AsSpan(2), NumberStyles.None, CultureInfo.InvariantCulture, out var pauseMs))
        {
            _fleet.ObserveBudget(0, 0, pauseMs);
        }
    }
}
