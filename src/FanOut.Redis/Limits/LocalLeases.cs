using System.Diagnostics;

using FanOut.Redis.Diagnostics;

namespace FanOut.Redis;

/// <summary>
/// The state a <see cref="RedisConcurrencyLimit"/>'s workers and background loops share: the queue of waiting workers, the
/// ids of the leases held here, and the counts the lock-free paths read. Every change that spans more than one counter
/// happens under <see cref="_lock"/>, whose blocks open with <see cref="AssertInvariants"/>.
/// </summary>
/// <remarks>
/// Leases held here are interchangeable: <see cref="_held"/> lists their ids and <see cref="_idle"/> says how many of them are
/// not running an item. Waiters are completed after the lock is released (completing a task may run code).
/// </remarks>
internal sealed class LocalLeases
{
    private readonly RedisConcurrencyLimit _owner;
    private readonly TimeProvider _time;
    private readonly RedisLimitTelemetry _telemetry;
    private readonly int _budget;
    private readonly Adaptive.FleetPause? _pause;

    /// <summary>Guards <see cref="_waiters"/>, <see cref="_held"/>, <see cref="_returning"/> and <see cref="_orphans"/>; never held while user code runs.</summary>
    private readonly Lock _lock = new();

    /// <summary>Workers waiting for a permit, oldest first.</summary>
    private readonly LinkedList<LeaseWaiter> _waiters = new();

    /// <summary>Ids of the leases this process holds, busy and idle.</summary>
    private readonly List<string> _held = [];

    /// <summary>Ids a finished item handed back because this process holds more than its fair share while others wait.</summary>
    private readonly List<string> _returning = [];

    /// <summary>Ids that may be leased in Redis without being held here: asked for by a round given up on, or a release that failed.</summary>
    private readonly List<string> _orphans = [];

    /// <summary>Leases held here and not running an item: what <see cref="TryTakeIdle"/> takes without a round trip.</summary>
    private int _idle;

    /// <summary>Items running without a lease: fallback permits while Redis was unreachable, or leases lost at renewal.</summary>
    private int _unbacked;

    /// <summary>Mirror of <see cref="_waiters"/>.Count for the lock-free paths.</summary>
    private int _waiterCount;

    /// <summary>Mirror of <see cref="_held"/>.Count.</summary>
    private int _heldCount;

    /// <summary>The fewest idle leases seen since the return loop armed its linger: those were spare for the whole linger.</summary>
    private int _minIdle;

    /// <summary>
    /// Until when (a <see cref="Stopwatch"/> timestamp) every lease held here is surely live in Redis: one lease time after the
    /// last renewal of all of them was sent. Past it no idle lease is handed out: Redis may have purged it and granted it to
    /// another process (a renewal that never arrived, or data lost), so a new item waits for Redis instead.
    /// </summary>
    private long _liveUntil;

    /// <summary>When the connection last failed (a <see cref="Stopwatch"/> timestamp; guarded by <see cref="_lock"/>): see <see cref="Unverify"/>.</summary>
    private long _unverifiedAt;

    /// <summary>1 while the return loop is lingering or about to.</summary>
    private int _lingerArmed;

    public LocalLeases(RedisConcurrencyLimit owner, int budget, TimeProvider time, RedisLimitTelemetry telemetry, Adaptive.FleetPause? pause = null, Infrastructure.LoopActivity? activity = null)
    {
        Activity = activity ?? new Infrastructure.LoopActivity();
        _owner = owner;
        _pause = pause;
        _budget = budget;
        _time = time;
        _telemetry = telemetry;
        PumpWake = new WakeSignal(Activity);
        ReturnWake = new WakeSignal(Activity);
    }

    /// <summary>What the limit's loops, signals and message handler have left to do (<see cref="RedisConcurrencyLimit.WhenSettledAsync"/>).</summary>
    public Infrastructure.LoopActivity Activity { get; }

    /// <summary>Wakes the acquire loop: a worker waits, or an unbacked item ended.</summary>
    public WakeSignal PumpWake { get; }

    /// <summary>Wakes the return loop: a lease was handed back, a linger armed, or orphans wait for a release.</summary>
    public WakeSignal ReturnWake { get; }

    public int WaiterCount => Volatile.Read(ref _waiterCount);

    public int Idle => Volatile.Read(ref _idle);

    public int Unbacked => Volatile.Read(ref _unbacked);

    public int HeldCount => Volatile.Read(ref _heldCount);

    /// <summary>True while a fleet pause stops this process handing out leases.</summary>
    public bool IsPaused => _pause is { IsActive: true };

    public bool LingerArmed => Volatile.Read(ref _lingerArmed) != 0;

    /// <summary>Queues <paramref name="waiter"/>, unless an idle lease turned up meanwhile (then it took that one: false).</summary>
    public bool TryEnqueue(LeaseWaiter waiter)
    {
        lock (_lock)
        {
            AssertInvariants();

            // Announce the waiter before the last look at the idle count: a release that stocks a lease after our look
            // then sees _waiterCount != 0 and drains; one that stocked it before lets our look succeed.
            Interlocked.Increment(ref _waiterCount);
            if (TryTakeIdle())
            {
                Interlocked.Decrement(ref _waiterCount);
                return false;
            }

            waiter.Node = _waiters.AddLast(waiter);
            return true;
        }
    }

    /// <summary>Removes a waiter whose token was canceled before it got a permit.</summary>
    public bool TryRemove(LeaseWaiter waiter)
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

    /// <summary>Takes one idle lease and counts it in the owner's <see cref="ConcurrencyLimit.InFlight"/>; none while the fleet is paused.</summary>
    public bool TryTakeIdle()
    {
        if (_pause is { IsActive: true } || Stopwatch.GetTimestamp() > Volatile.Read(ref _liveUntil))
        {
            return false;
        }

        var idle = Volatile.Read(ref _idle);
        while (idle > 0)
        {
            var seen = Interlocked.CompareExchange(ref _idle, idle - 1, idle);
            if (seen == idle)
            {
                // The owner's pool is the budget, so this only fails while unbacked items overshoot it (leases lost at renewal).
                if (!_owner.CountPermit())
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

    /// <summary>True while the leases held here are surely live in Redis (see <see cref="_liveUntil"/>).</summary>
    public bool IsLive => Stopwatch.GetTimestamp() <= Volatile.Read(ref _liveUntil);

    /// <summary>Every lease held here was renewed (or granted) by a script sent at <paramref name="sentAt"/> (a <see cref="Stopwatch"/> timestamp): they live at least one lease time from then.</summary>
    /// <remarks>A script sent before the connection last failed vouches for nothing (<see cref="Unverify"/>): it may have been answered by the server that lost the data.</remarks>
    public void LiveFrom(long sentAt, TimeSpan leaseTime)
    {
        var until = sentAt + (long)(leaseTime.TotalSeconds * Stopwatch.Frequency);
        lock (_lock)
        {
            AssertInvariants();
            if (sentAt < _unverifiedAt || until <= _liveUntil)
            {
                return;
            }

            Volatile.Write(ref _liveUntil, until);
        }

        Drain(); // idle leases held back as possibly expired may serve the waiters again
    }

    /// <summary>
    /// The connection to Redis failed: Redis may have restarted and lost every lease held here, so no idle one is handed out
    /// until a script sent after now says they are live (a renewal re-registers them, or reports them lost).
    /// </summary>
    public void Unverify()
    {
        lock (_lock)
        {
            AssertInvariants();
            _unverifiedAt = Stopwatch.GetTimestamp();
            Volatile.Write(ref _liveUntil, 0);
        }

        PumpWake.Set(); // waiters here now need the acquire loop (which renews first)
    }

    /// <summary>Ends an item that ran without a lease, if one is running.</summary>
    public bool TryEndUnbacked() => TryDecrement(ref _unbacked);

    /// <summary>Moves one held lease to the return list (a finished item's lease, over the fair share while others wait).</summary>
    public bool TryHandBackOne()
    {
        lock (_lock)
        {
            AssertInvariants();
            if (_held.Count == 0)
            {
                return false;
            }

            _returning.Add(_held[^1]);
            _held.RemoveAt(_held.Count - 1);
            Volatile.Write(ref _heldCount, _held.Count);
        }

        ReturnWake.Set();
        return true;
    }

    /// <summary>A finished item's lease stays here: to the oldest waiter, or idle (arming the linger).</summary>
    public void Stock()
    {
        Interlocked.Increment(ref _idle);

        // Full fence above; see TryEnqueue for the other half of this handshake.
        if (Volatile.Read(ref _waiterCount) != 0)
        {
            Drain();
        }
        else
        {
            ArmLinger();
        }
    }

    /// <summary>Leases Redis granted: they first back the items running without one, the rest are idle and go to the waiters.</summary>
    public void AddGranted(ReadOnlySpan<string> ids)
    {
        lock (_lock)
        {
            AssertInvariants();
            foreach (var id in ids)
            {
                _held.Add(id);
            }

            Volatile.Write(ref _heldCount, _held.Count);

            // A lease that backs a running unbacked item is busy, not idle: that item's release then keeps the lease.
            var backed = 0;
            while (backed < ids.Length && TryDecrement(ref _unbacked))
            {
                backed++;
            }

            Interlocked.Add(ref _idle, ids.Length - backed);
        }

        _telemetry.LeasesHeld(ids.Length);
        Drain();
        if (Volatile.Read(ref _idle) > 0)
        {
            ArmLinger();
        }
    }

    /// <summary>The ids held here now, for a renewal.</summary>
    public string[] SnapshotHeld()
    {
        lock (_lock)
        {
            AssertInvariants();
            return [.. _held];
        }
    }

    /// <summary>Forgets leases Redis no longer has and could not re-add: an idle one is simply gone; a busy one's item finishes unbacked.</summary>
    public void DropLost(IReadOnlyList<string> lost)
    {
        var dropped = 0;
        lock (_lock)
        {
            AssertInvariants();
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

        _telemetry.LeasesHeld(-dropped);
        _telemetry.Lost(dropped);
    }

    /// <summary>Remembers ids that may be leased in Redis without being held here, for the return loop to release.</summary>
    /// <remarks>At most a budget of them is kept (no more can be live at once); the oldest go first and would expire on their own.</remarks>
    public void AddOrphans(IEnumerable<string> ids)
    {
        lock (_lock)
        {
            AssertInvariants();
            _orphans.AddRange(ids);
            if (_orphans.Count > _budget)
            {
                _orphans.RemoveRange(0, _orphans.Count - _budget);
            }
        }

        ReturnWake.Set();
    }

    /// <summary>
    /// The ids to release now: those handed back over the fair share, the idle ones that stayed spare through the linger
    /// (when it ran), and the orphans. <paramref name="held"/> counts those that were held here.
    /// </summary>
    public List<string> TakeToReturn(out int held)
    {
        var lingered = Interlocked.Exchange(ref _lingerArmed, 0) != 0;
        lock (_lock)
        {
            AssertInvariants();
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

            held = ids.Count;
            ids.AddRange(_orphans);
            _orphans.Clear();
            return ids;
        }
    }

    /// <summary>Every id this limit may still hold in Redis, taken for good (disposal); <paramref name="held"/> counts those held here.</summary>
    public string[] TakeAll(out int held)
    {
        lock (_lock)
        {
            AssertInvariants();
            held = _held.Count + _returning.Count;
            string[] ids = [.. _held, .. _returning, .. _orphans];
            _held.Clear();
            _returning.Clear();
            _orphans.Clear();
            Volatile.Write(ref _heldCount, 0);
            Volatile.Write(ref _idle, 0);
            return ids;
        }
    }

    /// <summary>Starts the return loop's linger unless it is already lingering; the idle count now is the starting minimum.</summary>
    public void ArmLinger()
    {
        if (Volatile.Read(ref _lingerArmed) == 0 && Interlocked.Exchange(ref _lingerArmed, 1) == 0)
        {
            Volatile.Write(ref _minIdle, Volatile.Read(ref _idle));
            ReturnWake.Set();
        }
    }

    /// <summary>Hands idle leases to the waiters, oldest first.</summary>
    public void Drain()
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

    /// <summary>Serves waiters from the local fallback limit (Redis unreachable): at most <paramref name="fallbackLimit"/> items in flight here.</summary>
    public void GrantFallback(int fallbackLimit)
    {
        LeaseWaiter? granted = null;
        lock (_lock)
        {
            AssertInvariants();
            while (_waiters.First is { } node && _owner.InFlight < fallbackLimit && _owner.CountPermit())
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

    /// <summary>Fails every waiter with <paramref name="exception"/>.</summary>
    public void FailWaiters(Exception exception)
    {
        LeaseWaiter? failed = null;
        lock (_lock)
        {
            AssertInvariants();
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

    /// <summary>Completes a chain of waiters outside the lock: granted when <paramref name="exception"/> is null, else failed.</summary>
    private void Complete(LeaseWaiter? waiter, Exception? exception)
    {
        while (waiter is not null)
        {
            var next = waiter.Next;
            if (exception is null)
            {
                _telemetry.Waited(_time.GetElapsedTime(waiter.StartTimestamp));
                waiter.Grant();
            }
            else
            {
                waiter.Fail(exception);
            }

            waiter = next;
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
        Debug.Assert(Volatile.Read(ref _idle) >= 0 && Volatile.Read(ref _unbacked) >= 0);
        Debug.Assert(_orphans.Count <= _budget);

        // A waiter announces itself (the count) just before it is queued, under this lock, so the two differ by at most one.
        Debug.Assert(_waiters.Count == Volatile.Read(ref _waiterCount) || _waiters.Count + 1 == Volatile.Read(ref _waiterCount));
    }
}
