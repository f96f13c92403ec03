using System.Diagnostics;
using System.Globalization;

using FanOut.Redis.Diagnostics;
using FanOut.Redis.Leases;

using StackExchange.Redis;

namespace FanOut.Redis;

/// <summary>
/// A <see cref="ConcurrencyLimit"/> whose permits are leases in Redis: every process that creates one with the same
/// <see cref="RedisLimitOptions.Key"/> shares one <see cref="RedisLimitOptions.Budget"/>, so N workers calling FanOutAsync
/// against one downstream hold at most the budget between them.
/// </summary>
/// <remarks>
/// <para>A local front keeps the per-item cost off the network: a permit is taken without any round trip while this process
/// holds an idle lease. A worker that finds none waits while one background loop leases from Redis in batches of at most
/// <see cref="RedisLimitOptions.BatchSize"/>; a finished item's lease goes to the next local waiter, or stays idle here and
/// goes back to Redis once it sat unused for <see cref="RedisLimitOptions.Linger"/>. While other processes are left short,
/// a process holding more than its fair share (budget / active processes) hands each lease its items finish back to Redis.</para>
/// <para>Leases expire after <see cref="RedisLimitOptions.LeaseTime"/> by the Redis server's clock and are renewed every third
/// of it while held, so a crashed process's permits come back within one lease time and a long item keeps its permit.
/// Waiters are woken by a pub/sub message on every release, with a jittered poll as the safety net.</para>
/// <para>Dispose it (<see cref="DisposeAsync"/>) after the fan-out calls that use it have finished: that stops its loops and
/// returns every lease.</para>
/// </remarks>
public sealed class RedisConcurrencyLimit : ConcurrencyLimit, IAsyncDisposable
{
    private const string RedisKind = "redis";

    private static readonly Task<bool> s_granted = Task.FromResult(true);
    private static readonly Task<bool> s_canceled = Task.FromResult(false);

    private readonly RedisLimitOptions _options;
    private readonly LeaseStore _store;
    private readonly ISubscriber _subscriber;
    private readonly IConnectionMultiplexer? _ownedConnection;
    private readonly TimeProvider _time;
    private readonly KeyValuePair<string, object?>[] _tags;
    private readonly Action<RedisChannel, RedisValue> _onMessage;

    /// <summary>Guards <see cref="_waiters"/>, <see cref="_held"/>, <see cref="_returning"/> and <see cref="_loops"/>; never held while user code runs.</summary>
    private readonly Lock _lock = new();

    /// <summary>Workers waiting for a permit, oldest first.</summary>
    private readonly LinkedList<LeaseWaiter> _waiters = new();

    /// <summary>Ids of the leases this process holds, busy and idle (they are interchangeable: counts say which are idle).</summary>
    private readonly List<string> _held = [];

    /// <summary>Ids a finished item handed back because this process holds more than its fair share while others wait.</summary>
    private readonly List<string> _returning = [];

    /// <summary>Serializes the scripts that change this client's leases, so a renewal never re-adds a lease released meanwhile.</summary>
    private readonly SemaphoreSlim _storeGate = new(1, 1);

    private readonly WakeSignal _pumpWake = new();
    private readonly WakeSignal _returnWake = new();
    private readonly CancellationTokenSource _stop = new();

    /// <summary>The background loops (acquire, heartbeat, return), started by the first wait; awaited by <see cref="DisposeAsync"/>.</summary>
    private Task? _loops;

    /// <summary>Leases held here and not running an item: what <see cref="TryAcquire"/> takes without a round trip.</summary>
    private int _idle;

    /// <summary>Items running without a lease: fallback permits while Redis was unreachable, or leases lost at renewal.</summary>
    private int _unbacked;

    /// <summary>Mirror of <see cref="_waiters"/>.Count for the lock-free paths (see <see cref="Release"/>).</summary>
    private int _waiterCount;

    /// <summary>Mirror of <see cref="_held"/>.Count.</summary>
    private int _heldCount;

    /// <summary>The fewest idle leases seen since the return loop armed its linger: those were spare for the whole linger.</summary>
    private int _minIdle;

    /// <summary>1 while the return loop is lingering or about to.</summary>
    private int _lingerArmed;

    /// <summary>Other processes left short, as the last script answer (or a <c>w:</c> message) said.</summary>
    private int _othersWaiting;

    /// <summary>Active processes, this one included, as the last script answer said.</summary>
    private int _fleetClients = 1;

    /// <summary>Leases held fleet-wide, as the last script answer said.</summary>
    private int _fleetInUse;

    private long _nextLeaseNumber;
    private string _epoch = string.Empty;
    private int _disposed;

    private RedisConcurrencyLimit(IConnectionMultiplexer redis, RedisLimitOptions options, bool ownsConnection)
    {
        _options = options;
        _time = options.TimeProvider;
        var clientId = string.Create(CultureInfo.InvariantCulture, $"{Environment.ProcessId}-{Guid.NewGuid():N}");
        _store = new LeaseStore(redis.GetDatabase(), options, clientId);
        _subscriber = redis.GetSubscriber();
        _ownedConnection = ownsConnection ? redis : null;
        _tags = [new(FanOut.Diagnostics.FanOutInstruments.LimitKindTag, RedisKind), new(RedisLimitInstruments.KeyTag, options.Key)];
        _onMessage = OnMessage;
    }

    /// <summary>A limit sharing <paramref name="options"/>'s budget through <paramref name="redis"/>, which the caller keeps and disposes.</summary>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    public static RedisConcurrencyLimit Create(IConnectionMultiplexer redis, RedisLimitOptions options)
    {
        ArgumentNullException.ThrowIfNull(redis);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return new RedisConcurrencyLimit(redis, options, ownsConnection: false);
    }

    /// <summary>Connects to Redis with <paramref name="configuration"/> (e.g. <c>127.0.0.1:6379</c>) and returns a limit that owns the connection.</summary>
    /// <remarks>The connection does not abort when Redis is down at start: acquisitions then follow <see cref="RedisLimitOptions.WhenUnavailable"/>.</remarks>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    public static async Task<RedisConcurrencyLimit> ConnectAsync(string configuration, RedisLimitOptions options)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var settings = ConfigurationOptions.Parse(configuration);
        settings.AbortOnConnectFail = false;
        var redis = await ConnectionMultiplexer.ConnectAsync(settings).ConfigureAwait(false);
        return new RedisConcurrencyLimit(redis, options, ownsConnection: true);
    }

    /// <summary>The fleet-wide budget (<see cref="RedisLimitOptions.Budget"/>): the most permits all processes hold together.</summary>
    public override int Current => _options.Budget;

    /// <inheritdoc/>
    /// <value><c>redis</c>.</value>
    public override string Kind => RedisKind;

    /// <summary>The options this limit was created with.</summary>
    public RedisLimitOptions Options => _options;

    /// <summary>Leases this process holds right now, busy and idle.</summary>
    public int LeasesHeld => Volatile.Read(ref _heldCount);

    /// <summary>Leases held here and not running an item.</summary>
    public int IdleLeases => Volatile.Read(ref _idle);

    /// <summary>Leases held fleet-wide, as Redis last reported it to this process.</summary>
    public int FleetInUse => Volatile.Read(ref _fleetInUse);

    /// <summary>Scripts this limit has run in Redis (acquire, renew, release): its round trips, for measuring the cost per item.</summary>
    public long RoundTrips => _store.RoundTrips;

    /// <summary>This process's fair share of the budget: budget / active processes, rounded up.</summary>
    private int FairShare => (_options.Budget + Math.Max(1, Volatile.Read(ref _fleetClients)) - 1) / Math.Max(1, Volatile.Read(ref _fleetClients));

    /// <summary>Takes an idle lease held here; never touches the network. Fails while local workers wait, so they are served first.</summary>
    /// <summary>
    /// Always: other processes cannot be seen waiting from here, so a worker gives its permit back after every item and
    /// <see cref="Release"/> decides whether the lease stays idle here, goes to a local waiter, or back to the fleet.
    /// </summary>
    internal override bool ShouldReturnPermit => true;

    internal override bool TryAcquire() => Volatile.Read(ref _waiterCount) == 0 && TryTakeIdle();

    /// <summary>Waits for a lease: from a finished local item, or from Redis through the acquire loop.</summary>
    /// <returns>False when <paramref name="cancellationToken"/> was canceled first.</returns>
    /// <exception cref="RedisLimitUnavailableException">Redis could not be reached and the policy is <see cref="RedisUnavailablePolicy.Fail"/> (the task faults).</exception>
    /// <exception cref="ObjectDisposedException">The limit was disposed.</exception>
    internal override Task<bool> WaitAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return s_canceled;
        }

        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        var waiter = new LeaseWaiter(this, _time.GetTimestamp());
        lock (_lock)
        {
            // Announce the waiter before the last look at the idle count: a Release that stocks a lease after our look
            // then sees _waiterCount != 0 and drains; one that stocked it before lets our look succeed.
            Interlocked.Increment(ref _waiterCount);
            if (TryTakeIdle())
            {
                Interlocked.Decrement(ref _waiterCount);
                return s_granted;
            }

            waiter.Node = _waiters.AddLast(waiter);
            _loops ??= StartLoops();
        }

        waiter.Register(cancellationToken);
        _pumpWake.Set();
        return waiter.Task;
    }

    /// <summary>Gives a permit back: to a local waiter, to the idle stock, or to Redis when this process holds more than its fair share while others wait.</summary>
    internal override void Release()
    {
        base.Release();
        if (TryDecrement(ref _unbacked))
        {
            // A permit without a lease ends here; the room it frees is fallback room, which only the acquire loop hands out.
            if (Volatile.Read(ref _waiterCount) != 0)
            {
                _pumpWake.Set();
            }

            return;
        }

        if (Volatile.Read(ref _othersWaiting) != 0 && Volatile.Read(ref _heldCount) > FairShare)
        {
            lock (_lock)
            {
                if (_held.Count > 0)
                {
                    _returning.Add(_held[^1]);
                    _held.RemoveAt(_held.Count - 1);
                    Volatile.Write(ref _heldCount, _held.Count);
                }
            }

            _returnWake.Set();
            return;
        }

        Interlocked.Increment(ref _idle);

        // Full fence above; see WaitAsync for the other half of this handshake.
        if (Volatile.Read(ref _waiterCount) != 0)
        {
            Drain();
        }
        else
        {
            ArmLinger();
        }
    }

    /// <summary>Removes a waiter whose token was canceled before it got a permit.</summary>
    internal bool TryRemove(LeaseWaiter waiter)
    {
        lock (_lock)
        {
            AssertInvariants();
            if (waiter.Node?.List is null)
            {
                return false; // already granted or failed
            }

            _waiters.Remove(waiter.Node);
            Interlocked.Decrement(ref _waiterCount);
            return true;
        }
    }

    /// <summary>Stops the loops, fails any waiter with <see cref="ObjectDisposedException"/>, returns every lease to Redis and leaves the fleet.</summary>
    /// <remarks>A lease that cannot be returned (Redis unreachable) expires within <see cref="RedisLimitOptions.LeaseTime"/>.</remarks>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stop.CancelAsync().ConfigureAwait(false);
        Task? loops;
        lock (_lock)
        {
            loops = _loops;
        }

        if (loops is not null)
        {
            await loops.ConfigureAwait(false);
        }

        FailWaiters(new ObjectDisposedException(nameof(RedisConcurrencyLimit)));
        string[] ids;
        lock (_lock)
        {
            ids = [.. _held, .. _returning];
            _held.Clear();
            _returning.Clear();
            Volatile.Write(ref _heldCount, 0);
            Volatile.Write(ref _idle, 0);
        }

        try
        {
            if (ids.Length > 0)
            {
                Observe(await _store.ReleaseAsync(ids).ConfigureAwait(false));
                AddHeld(-ids.Length);
            }

            await _store.LeaveAsync().ConfigureAwait(false);
            await _subscriber.UnsubscribeAsync(_store.Channel, _onMessage).ConfigureAwait(false);
        }
        catch (RedisException)
        {
            // Unreachable: the leases expire on their own within one lease time.
        }

        if (_ownedConnection is not null)
        {
            await _ownedConnection.DisposeAsync().ConfigureAwait(false);
        }

        _stop.Dispose();
        _storeGate.Dispose();
    }

    private Task StartLoops() =>
        Task.WhenAll(
            Task.Run(() => RunLoopAsync(AcquireLoopAsync)),
            Task.Run(() => RunLoopAsync(HeartbeatLoopAsync)),
            Task.Run(() => RunLoopAsync(ReturnLoopAsync)));

    private async Task RunLoopAsync(Func<CancellationToken, Task> loop)
    {
        try
        {
            await loop(_stop.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (_stop.IsCancellationRequested)
        {
            // Disposed.
        }
    }

    /// <summary>
    /// While workers wait (or items run without a lease), leases from Redis in batches; then waits for a release message,
    /// a new waiter or the jittered poll.
    /// </summary>
    private async Task AcquireLoopAsync(CancellationToken token)
    {
        var subscribed = false;
        while (!token.IsCancellationRequested)
        {
            if (Volatile.Read(ref _waiterCount) == 0 && Volatile.Read(ref _unbacked) == 0)
            {
                await _pumpWake.WaitAsync(null, _time, token).ConfigureAwait(false);
                continue;
            }

            subscribed = subscribed || await TrySubscribeAsync().ConfigureAwait(false);
            if (!await AcquireRoundAsync().ConfigureAwait(false))
            {
                var jittered = _options.PollInterval * (0.5 + Random.Shared.NextDouble());
                await _pumpWake.WaitAsync(jittered, _time, token).ConfigureAwait(false);
            }
        }
    }

    /// <summary>One round trip for up to a batch of leases, handed to the waiters in order.</summary>
    /// <returns>True when Redis granted everything asked for (so more waiters may be served at once).</returns>
    private async Task<bool> AcquireRoundAsync()
    {
        // Items running without a lease (fallback, or lost) are registered first, so Redis counts what really runs.
        var waiting = Volatile.Read(ref _waiterCount);
        var forWaiters = waiting == 0 ? 0 : Math.Max(waiting, Math.Min(_options.BatchSize, _options.Budget));
        var want = Math.Min(Volatile.Read(ref _unbacked) + forWaiters, _options.Budget - Volatile.Read(ref _heldCount));
        if (want <= 0)
        {
            return false;
        }

        var ids = new string[want];
        for (var i = 0; i < ids.Length; i++)
        {
            ids[i] = string.Create(CultureInfo.InvariantCulture, $"{_store.ClientId}:{Interlocked.Increment(ref _nextLeaseNumber)}");
        }

        AcquireReply reply;
        await _storeGate.WaitAsync().ConfigureAwait(false);
        try
        {
            reply = await _store.AcquireAsync(_epoch, ids).ConfigureAwait(false);
            if (reply.EpochChanged)
            {
                // Redis lost its data (or this is the first call): re-register what we hold before asking for more.
                await RenewCoreAsync().ConfigureAwait(false);
                reply = await _store.AcquireAsync(_epoch, ids).ConfigureAwait(false);
            }

            Observe(reply.Fleet);
            if (reply.Granted > 0)
            {
                lock (_lock)
                {
                    _held.AddRange(ids.AsSpan(0, reply.Granted));
                    Volatile.Write(ref _heldCount, _held.Count);
                }

                AddHeld(reply.Granted);
                // A lease that backs a running unbacked item is busy, not idle: its Release then returns the lease.
                var backed = 0;
                while (backed < reply.Granted && TryDecrement(ref _unbacked))
                {
                    backed++;
                }

                Interlocked.Add(ref _idle, reply.Granted - backed);
            }
        }
        catch (RedisException e)
        {
            OnUnavailable(e);
            return false;
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // Not Redis being unreachable: a bug or a malformed answer. Fail the waiters with it rather than leave them hanging.
            FailWaiters(e);
            return false;
        }
        finally
        {
            _storeGate.Release();
        }

        if (reply.Granted > 0)
        {
            Drain();
            if (Volatile.Read(ref _idle) > 0)
            {
                ArmLinger();
            }
        }

        return reply.Granted == want;
    }

    /// <summary>Every third of the lease time, renews the leases held here (re-adding any Redis lost, while the budget has room).</summary>
    private async Task HeartbeatLoopAsync(CancellationToken token)
    {
        var every = _options.LeaseTime / 3;
        while (true)
        {
            await Task.Delay(every, _time, token).ConfigureAwait(false);
            if (Volatile.Read(ref _heldCount) == 0)
            {
                continue;
            }

            await _storeGate.WaitAsync(token).ConfigureAwait(false);
            try
            {
                await RenewCoreAsync().ConfigureAwait(false);
            }
            catch (RedisException)
            {
                // Unreachable: the next heartbeat (or acquisition) re-registers these leases once Redis answers.
                RedisLimitMetrics.Unavailable.Add(1, _tags);
            }
            finally
            {
                _storeGate.Release();
            }
        }
    }

    /// <summary>Hands back the leases a finished item released over the fair share at once, and idle leases after they lingered unused.</summary>
    private async Task ReturnLoopAsync(CancellationToken token)
    {
        while (true)
        {
            await _returnWake.WaitAsync(null, _time, token).ConfigureAwait(false);
            if (Volatile.Read(ref _lingerArmed) != 0 && _options.Linger > TimeSpan.Zero)
            {
                await Task.Delay(_options.Linger, _time, token).ConfigureAwait(false);
            }

            var ids = TakeLeasesToReturn();
            if (ids.Count > 0)
            {
                // No token: these ids are no longer in _held, so DisposeAsync would not return them if this wait were canceled.
                await _storeGate.WaitAsync(CancellationToken.None).ConfigureAwait(false);
                try
                {
                    Observe(await _store.ReleaseAsync(ids).ConfigureAwait(false));
                }
                catch (RedisException)
                {
                    // Unreachable: the leases were dropped here and expire in Redis within one lease time.
                }
                finally
                {
                    _storeGate.Release();
                    AddHeld(-ids.Count);
                }
            }

            if (Volatile.Read(ref _idle) > 0)
            {
                ArmLinger();
            }
        }
    }

    /// <summary>The leases to hand back now: those returned over the fair share, and the idle ones that stayed spare through the linger.</summary>
    private List<string> TakeLeasesToReturn()
    {
        var lingered = Interlocked.Exchange(ref _lingerArmed, 0) != 0;
        lock (_lock)
        {
            var ids = new List<string>(_returning);
            _returning.Clear();
            if (lingered)
            {
                var spare = Math.Min(Volatile.Read(ref _minIdle), Volatile.Read(ref _idle));
                while (spare-- > 0 && _held.Count > 0 && TryDecrement(ref _idle))
                {
                    ids.Add(_held[^1]);
                    _held.RemoveAt(_held.Count - 1);
                }

                Volatile.Write(ref _heldCount, _held.Count);
            }

            return ids;
        }
    }

    /// <summary>Renews every lease held here; the caller holds <see cref="_storeGate"/>.</summary>
    private async Task RenewCoreAsync()
    {
        string[] ids;
        lock (_lock)
        {
            ids = [.. _held];
        }

        var reply = await _store.RenewAsync(_epoch, ids).ConfigureAwait(false);
        Volatile.Write(ref _epoch, reply.Epoch);
        Observe(reply.Fleet);
        if (reply.Renewed + reply.Reclaimed > 0 && RedisLimitMetrics.Renewals.Enabled)
        {
            RedisLimitMetrics.Renewals.Add(reply.Renewed + reply.Reclaimed, _tags);
        }

        if (reply.Lost.Count > 0)
        {
            DropLost(reply.Lost);
        }
    }

    /// <summary>Forgets leases Redis no longer has and could not re-add: an idle one is simply gone; a busy one's item finishes unbacked.</summary>
    private void DropLost(IReadOnlyList<string> lost)
    {
        var dropped = 0;
        lock (_lock)
        {
            foreach (var id in lost)
            {
                if (!_held.Remove(id))
                {
                    continue; // returned meanwhile
                }

                dropped++;
                if (!TryDecrement(ref _idle))
                {
                    Interlocked.Increment(ref _unbacked);
                }
            }

            Volatile.Write(ref _heldCount, _held.Count);
        }

        AddHeld(-dropped);
        if (RedisLimitMetrics.Lost.Enabled)
        {
            RedisLimitMetrics.Lost.Add(dropped, _tags);
        }
    }

    /// <summary>Redis could not be reached: fail the waiters, or serve them from the local fallback limit.</summary>
    private void OnUnavailable(RedisException exception)
    {
        RedisLimitMetrics.Unavailable.Add(1, _tags);
        if (_options.WhenUnavailable == RedisUnavailablePolicy.Fail)
        {
            FailWaiters(new RedisLimitUnavailableException(
                $"The Redis concurrency limit '{_options.Key}' could not reach Redis to lease a permit ({exception.Message}). " +
                $"No permit is handed out without Redis under WhenUnavailable = {RedisUnavailablePolicy.Fail}; set WhenUnavailable = {RedisUnavailablePolicy.FallBackToLocal} and a FallbackLimit to run on a local limit instead.",
                exception));
            return;
        }

        LeaseWaiter? granted = null;
        lock (_lock)
        {
            while (_waiters.First is { } node && InFlight < _options.FallbackLimit && base.TryAcquire())
            {
                Interlocked.Increment(ref _unbacked);
                _waiters.RemoveFirst();
                Interlocked.Decrement(ref _waiterCount);
                node.Value.Next = granted;
                granted = node.Value;
            }
        }

        Complete(granted, null);
    }

    private void FailWaiters(Exception exception)
    {
        LeaseWaiter? failed = null;
        lock (_lock)
        {
            while (_waiters.First is { } node)
            {
                _waiters.RemoveFirst();
                Interlocked.Decrement(ref _waiterCount);
                node.Value.Next = failed;
                failed = node.Value;
            }
        }

        Complete(failed, exception);
    }

    /// <summary>Hands idle leases to the waiters, oldest first.</summary>
    private void Drain()
    {
        LeaseWaiter? granted = null;
        lock (_lock)
        {
            AssertInvariants();
            while (_waiters.First is { } node && TryTakeIdle())
            {
                _waiters.RemoveFirst();
                Interlocked.Decrement(ref _waiterCount);
                node.Value.Next = granted;
                granted = node.Value;
            }
        }

        Complete(granted, null);
    }

    /// <summary>Completes a chain of waiters outside the lock: granted when <paramref name="exception"/> is null, else failed.</summary>
    private void Complete(LeaseWaiter? waiter, Exception? exception)
    {
        while (waiter is not null)
        {
            var next = waiter.Next;
            if (exception is null)
            {
                if (RedisLimitMetrics.WaitDuration.Enabled)
                {
                    RedisLimitMetrics.WaitDuration.Record(_time.GetElapsedTime(waiter.StartTimestamp).TotalSeconds, _tags);
                }

                waiter.Grant();
            }
            else
            {
                waiter.Fail(exception);
            }

            waiter = next;
        }
    }

    /// <summary>Takes one idle lease and counts it in <see cref="ConcurrencyLimit.InFlight"/>.</summary>
    private bool TryTakeIdle()
    {
        var idle = Volatile.Read(ref _idle);
        while (idle > 0)
        {
            var seen = Interlocked.CompareExchange(ref _idle, idle - 1, idle);
            if (seen == idle)
            {
                // The base pool is the budget, so this only fails while unbacked items overshoot it (leases lost at renewal).
                if (!base.TryAcquire())
                {
                    Interlocked.Increment(ref _idle);
                    return false;
                }

                if (idle - 1 < Volatile.Read(ref _minIdle))
                {
                    Volatile.Write(ref _minIdle, idle - 1);
                }

                return true;
            }

            idle = seen;
        }

        return false;
    }

    /// <summary>Starts the return loop's linger unless it is already lingering; the idle count now is the starting minimum.</summary>
    private void ArmLinger()
    {
        if (Volatile.Read(ref _lingerArmed) == 0 && Interlocked.Exchange(ref _lingerArmed, 1) == 0)
        {
            Volatile.Write(ref _minIdle, Volatile.Read(ref _idle));
            _returnWake.Set();
        }
    }

    private async Task<bool> TrySubscribeAsync()
    {
        try
        {
            await _subscriber.SubscribeAsync(_store.Channel, _onMessage).ConfigureAwait(false);
            return true;
        }
        catch (RedisException)
        {
            return false; // the poll covers it; retried on the next round
        }
    }

    /// <summary>A release (<c>r</c>) wakes the acquire loop; another client left short (<c>w:id</c>) starts handing spare leases back.</summary>
    private void OnMessage(RedisChannel channel, RedisValue message)
    {
        var text = (string?)message;
        if (text == "r")
        {
            if (Volatile.Read(ref _waiterCount) != 0)
            {
                _pumpWake.Set();
            }
        }
        else if (text is not null && text.StartsWith("w:", StringComparison.Ordinal) && !text.AsSpan(2).SequenceEqual(_store.ClientId))
        {
            Volatile.Write(ref _othersWaiting, 1);
            if (Volatile.Read(ref _idle) > 0)
            {
                ArmLinger();
            }
        }
    }

    private void Observe(FleetView fleet)
    {
        Volatile.Write(ref _othersWaiting, fleet.OthersWaiting);
        Volatile.Write(ref _fleetClients, Math.Max(1, fleet.Clients));
        Observe(fleet.InUse);
        if (fleet.Expired > 0 && RedisLimitMetrics.Expiries.Enabled)
        {
            RedisLimitMetrics.Expiries.Add(fleet.Expired, _tags);
        }
    }

    private void Observe(int fleetInUse)
    {
        Volatile.Write(ref _fleetInUse, fleetInUse);
        if (RedisLimitMetrics.FleetInUse.Enabled)
        {
            RedisLimitMetrics.FleetInUse.Record(fleetInUse, _tags);
        }
    }

    private void AddHeld(int delta)
    {
        if (delta != 0 && RedisLimitMetrics.LeasesHeld.Enabled)
        {
            RedisLimitMetrics.LeasesHeld.Add(delta, _tags);
        }
    }

    private static bool TryDecrement(ref int counter)
    {
        var value = Volatile.Read(ref counter);
        while (value > 0)
        {
            var seen = Interlocked.CompareExchange(ref counter, value - 1, value);
            if (seen == value)
            {
                return true;
            }

            value = seen;
        }

        return false;
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(Volatile.Read(ref _idle) <= _held.Count);
        Debug.Assert(_waiters.Count == Volatile.Read(ref _waiterCount) || _waiters.Count + 1 == Volatile.Read(ref _waiterCount));
    }
}
