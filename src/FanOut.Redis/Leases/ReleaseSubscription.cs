using System.Globalization;

using StackExchange.Redis;

namespace FanOut.Redis.Leases;

/// <summary>
/// The limit's subscription to its budget's channel: a release (<c>r</c>) wakes the acquire loop; another client left short
/// (<c>w:id</c>) or starving (<c>s:id</c>, below the floor share) starts handing spare leases back; an adaptive budget that moved (<c>b:budget:generation</c>) or a fleet
/// pause (<c>p:ms</c>) is taken in at once.
/// </summary>
/// <remarks>
/// <para>Subscribed once, and never waited for: an acquisition does not depend on it (the jittered poll covers a missing
/// subscription), so a subscription that waits in the connection's backlog cannot hold up the first acquisition.
/// StackExchange.Redis keeps the subscription and subscribes again after each reconnect.</para>
/// <para>Messages are handled one at a time, in the order Redis sent them (a <see cref="ChannelMessageQueue"/>; a handler
/// subscription runs them concurrently, in no order). So when this limit's own marker (<c>m:id:n</c>, <see cref="FlushAsync"/>)
/// has been handled, so has every message published on the channel before it: how a driver on a fake clock knows the
/// messages of the fleet's last round trips were taken in. Each message handled counts as the limit's activity.</para>
/// </remarks>
internal sealed class ReleaseSubscription
{
    private readonly LeaseClient _client;
    private readonly LocalLeases _leases;
    private readonly FleetState _fleet;
    private readonly Lock _lock = new();
    private ChannelMessageQueue? _queue;
    private int _started;
    private int _stopped;

    /// <summary>The subscription attempt <see cref="Start"/> began (it never faults); awaited by <see cref="UnsubscribeAsync"/>.</summary>
    private Task _subscribing = Task.CompletedTask;

    /// <summary>The number of the last marker published (guarded by <see cref="_lock"/>).</summary>
    private long _markerNumber;

    /// <summary>Completed when the marker numbered <see cref="_markerNumber"/> comes back (guarded by <see cref="_lock"/>).</summary>
    private TaskCompletionSource? _marker;

    /// <summary>Serializes <see cref="FlushAsync"/>.</summary>
    private readonly SemaphoreSlim _flushing = new(1, 1);

    /// <summary><see cref="LeaseStore.ScriptsSent"/> when the last completed flush began (under <see cref="_flushing"/>); -1 before any.</summary>
    private long _scriptsAtFlush = -1;

    public ReleaseSubscription(LeaseClient client, LocalLeases leases, FleetState fleet)
    {
        _client = client;
        _leases = leases;
        _fleet = fleet;
    }

    /// <summary>True once the subscription is in place (messages published from now on reach this limit).</summary>
    public bool IsSubscribed => Volatile.Read(ref _queue) is not null && Volatile.Read(ref _stopped) == 0;

    /// <summary>Subscribes in the background (once); a failure is observed and left to the connection's reconnects.</summary>
    public void Start()
    {
        if (Interlocked.Exchange(ref _started, 1) == 0)
        {
            _leases.Activity.Enter(); // subscribing is work in progress until it lands or fails
            Volatile.Write(ref _subscribing, SubscribeAsync());
        }
    }

    /// <summary>Unsubscribes this limit, within the client's bound (each step), after the subscription attempt has ended.</summary>
    /// <remarks>
    /// An attempt still on its way (a slow first round trip) is awaited first, so that a subscription landing after disposal
    /// is taken off before this returns, not after it (a fresh-clone CI run counted one subscriber after disposal).
    /// </remarks>
    public async Task UnsubscribeAsync(CancellationToken cancellationToken)
    {
        Volatile.Write(ref _stopped, 1);
        await _client.Bounded(Volatile.Read(ref _subscribing), cancellationToken).ConfigureAwait(false);
        if (Volatile.Read(ref _queue) is { } queue)
        {
            await _client.Bounded(queue.UnsubscribeAsync(), cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Publishes a marker on the channel and completes when this limit has handled it, so every message published before
    /// the call has been handled too. Completes at once when not subscribed (no message can arrive), or when no limit of
    /// this process has run a script since this one's last flush (messages come only from scripts).
    /// </summary>
    public async Task FlushAsync(CancellationToken cancellationToken)
    {
        if (!IsSubscribed || _client.ConnectionIfReady is not { } connection)
        {
            return;
        }

        // One flush at a time: a marker answers only the flush that published it.
        await _flushing.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            var scripts = LeaseStore.ScriptsSent;
            if (scripts == _scriptsAtFlush)
            {
                return;
            }

            TaskCompletionSource marker;
            long number;
            lock (_lock)
            {
                number = ++_markerNumber;
                _marker = marker = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }

            await connection.GetSubscriber().PublishAsync(_client.Channel, string.Create(CultureInfo.InvariantCulture, $"m:{_client.ClientId}:{number}")).WaitAsync(cancellationToken).ConfigureAwait(false);
            await marker.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            _scriptsAtFlush = scripts;
        }
        finally
        {
            _flushing.Release();
        }
    }

    private async Task SubscribeAsync()
    {
        try
        {
            var connection = await _client.ConnectionAsync().ConfigureAwait(false);
            var queue = await connection.GetSubscriber().SubscribeAsync(_client.Channel).ConfigureAwait(false);
            queue.OnMessage(OnMessage);
            Volatile.Write(ref _queue, queue);
            if (Volatile.Read(ref _stopped) != 0)
            {
                // Disposal unsubscribed before this subscription landed: take it off (it would keep the limit alive).
                await queue.UnsubscribeAsync().ConfigureAwait(false);
            }
        }
        catch (Exception)
        {
            // Redis unreachable (or the connection disposed): the poll covers it, and a reconnect subscribes again.
        }
        finally
        {
            _leases.Activity.Exit();
        }
    }

    private void OnMessage(ChannelMessage received)
    {
        var text = (string?)received.Message;
        if (text is not null && text.StartsWith("m:", StringComparison.Ordinal))
        {
            OnMarker(text);
            return; // a marker is not activity: a settled fleet's flushes change nothing
        }

        _leases.Activity.Enter();
        try
        {
            Handle(text);
        }
        finally
        {
            _leases.Activity.Exit();
        }
    }

    private void OnMarker(string text)
    {
        var prefix = "m:" + _client.ClientId + ":";
        if (!text.StartsWith(prefix, StringComparison.Ordinal) || !long.TryParse(text.AsSpan(prefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out var number))
        {
            return; // another limit's
        }

        TaskCompletionSource? marker = null;
        lock (_lock)
        {
            if (number == _markerNumber)
            {
                marker = _marker;
                _marker = null;
            }
        }

        marker?.TrySetResult();
    }

    private void Handle(string? text)
    {
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
