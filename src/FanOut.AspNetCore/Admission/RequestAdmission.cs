using System.Diagnostics;

using Microsoft.Extensions.Logging;

namespace FanOut.AspNetCore.Admission;

/// <summary>
/// Admits requests to a <see cref="ConcurrencyLimit"/>: a free permit at once, else a bounded queue ordered by priority
/// (gradual rejection as it fills, a timeout, eviction of the newest lower-priority request when full), else a refusal.
/// </summary>
/// <remarks>
/// <para>
/// The limit's own wait queue has no bound, no priority and no rejection, so this class keeps its own queue and takes the
/// limit's permits for it one at a time: a single pump holds at most one <see cref="ConcurrencyLimit.WaitAsync"/> while
/// the queue is not empty, and hands each permit it gets to the queue's head. The queue thus competes fairly, in the
/// limit's FIFO order, with anyone else who shares the limit (the service's own outgoing calls), and the limit may be any
/// implementation, through its public API only.
/// </para>
/// <para>
/// Ownership of a permit: the pump owns it from the moment <see cref="ConcurrencyLimit.WaitAsync"/> returns true until it
/// removes a request from the queue (under <see cref="_lock"/>) and completes it with <see cref="AdmissionStatus.Admitted"/>;
/// from then the request owns it. With nobody left to take it the pump gives it back at once. The pump never waits while
/// holding one. The limit's members (user code, for a custom limit) and completions run outside <see cref="_lock"/>.
/// </para>
/// <para>
/// The reserve: a request may take a permit only while the requests this class admitted (<see cref="_held"/>, counted by
/// compare-and-swap before the limit is asked) leave <see cref="ReserveFor"/> permits of the limit to the highest priority
/// above its own that was seen lately, so a critical request finds a permit free instead of queueing behind the next
/// completion. A queued request whose room is taken parks the pump (<see cref="_parkedFor"/>), which gives its permit back
/// at once; the next of this class's permits given back (<see cref="Release"/>) starts it again. Nobody waits holding a
/// permit or a place in <see cref="_held"/>.
/// </para>
/// <para>
/// A sheddable or normal request's wait: served after every higher priority, it is refused once it has waited
/// <see cref="FanOutConcurrencyOptions.SheddableWaitPerServiceTime"/> (sheddable) or
/// <see cref="FanOutConcurrencyOptions.QueuePerPermit"/> plus <see cref="FanOutConcurrencyOptions.NormalWaitPerServiceTime"/> (normal) times the median time an admitted request takes
/// (<see cref="_serviceTime"/>, fed by <see cref="Release"/>), by the same queue timer every request has, so it leaves the
/// queue as a timed-out request does and holds no permit. Critical requests wait up to <see cref="FanOutConcurrencyOptions.QueueTimeout"/>.
/// </para>
/// <para>
/// The cores' hold: while <see cref="CoresHold"/> holds, a request may take a permit only while this class holds fewer than
/// the machine's cores (the same compare-and-swap as the reserve's room, the smaller of the two), and the queue is sized
/// for the cores, not the limit, with a place per core at least.
/// </para>
/// </remarks>
internal sealed class RequestAdmission : IDisposable
{
    private static readonly Action<ILogger, Exception?> s_limiterFailed = LoggerMessage.Define(
        LogLevel.Error, new EventId(1, "LimiterFailed"), "The concurrency limit threw; requests are handled as LimiterFailure says.");

    /// <summary>How many limits' worth of critical requests may wait, whatever <see cref="FanOutConcurrencyOptions.QueuePerPermit"/> gives the others.</summary>
    /// <remarks>
    /// A critical request is admitted while any room exists; a queue of one limit (about one service time of waiting) was
    /// full in a machine's stall of a few tens of milliseconds at 4x load, refusing 2-12% of the critical requests
    /// (docs/server.md); three absorbs such stalls. <see cref="FanOutConcurrencyOptions.QueueTimeout"/> still bounds the wait.
    /// </remarks>
    internal const int CriticalQueueLimits = 3;

    /// <summary>The machine's stall a critical queue absorbs, in time: the requests the limit serves in it may wait, if more than <see cref="CriticalQueueLimits"/>' worth.</summary>
    /// <remarks>
    /// Stalls of a loaded machine are tens of milliseconds whatever the service time: three limits hold 15 ms of a 5 ms
    /// service, and at 4x load over the service's own CPU (critical requests alone 90% of its capacity) 4-6% of them were
    /// refused in every quiet round; docs/server.md rule 4.
    /// </remarks>
    internal static readonly TimeSpan CriticalQueueStall = TimeSpan.FromMilliseconds(100);

    /// <summary>How long after a request of a priority arrived its reserve still stands for the priorities below it.</summary>
    /// <remarks>
    /// A reserve that always stood would keep a service whose traffic is all one priority below <see cref="ConcurrencyLimit.Current"/>
    /// for good (an adaptive limit grows only when it is filled). One second is many service times of any request
    /// worth limiting, so a steady trickle of critical requests keeps their room, while a service that never sees one
    /// runs all its permits.
    /// </remarks>
    internal static readonly TimeSpan ReserveHold = TimeSpan.FromSeconds(1);

    private readonly ConcurrencyLimit _limit;
    private readonly int _queueLimit;
    private readonly double _queuePerPermit;
    private readonly double _rejectionStart;
    private readonly TimeSpan _queueTimeout;
    private readonly double _sheddableWaitPerServiceTime;
    private readonly double _normalWaitPerServiceTime;

    /// <summary>The median time an admitted request takes, from <see cref="Release"/>: what a sheddable request's wait is measured in.</summary>
    private readonly ServiceTimeEstimate _serviceTime;

    /// <summary>The wait in the thread pool before a request reaches the admission.</summary>
    private readonly ThreadPoolLag? _poolLag;

    /// <summary>The cores' hold (null: <see cref="FanOutConcurrencyOptions.WatchThreadPoolLag"/> off).</summary>
    private readonly CoresHold? _coresHold;
    private readonly LimiterFailureMode _limiterFailure;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly Func<double> _random;
    private readonly double _priorityReserve;
    private readonly long _reserveHoldTicks;

    /// <summary>When a request of each priority last arrived (<see cref="TimeProvider.GetTimestamp"/>; index = (int)priority).</summary>
    private readonly long[] _lastArrival;

    /// <summary>Permits held by requests this class admitted, plus places taken by a request about to ask the limit for one.</summary>
    /// <remarks>Only ever changed by compare-and-swap or Interlocked: room is reserved here first, then taken from the limit.</remarks>
    private int _held;

    /// <summary>While the pump is parked, the priority of the queue's head it could not admit (the reserve); -1 otherwise.</summary>
    /// <remarks>An arrival at or below it does not restart the pump (it would be refused the same room); a higher one, or a permit given back, does.</remarks>
    private int _parkedFor = -1;

    /// <summary>Guards the queues, <see cref="_queued"/> and <see cref="_pumping"/>; no user code and no completion under it.</summary>
    private readonly Lock _lock = new();

    /// <summary>Waiting requests, one FIFO list per priority (index = (int)priority).</summary>
    private readonly LinkedList<QueuedRequest>[] _queues;

    /// <summary>Requests in <see cref="_queues"/>; written under <see cref="_lock"/>, read without it by the fast path.</summary>
    private int _queued;

    /// <summary>The highest priority with a request waiting (-1: none); written under <see cref="_lock"/>, read without it by the fast path.</summary>
    /// <remarks>A request may skip the queue when nobody of its priority or above waits: it would be served before the lower ones anyway.</remarks>
    private int _highestWaiting = -1;

    /// <summary>True while the pump runs (it then waits for a permit, or is about to hand one over).</summary>
    private bool _pumping;

    private readonly CancellationTokenSource _disposed = new();

    private long _admittedAtOnce;
    private long _admittedFromQueue;
    private long _refused;
    private long _canceled;

    public RequestAdmission(FanOutConcurrencyOptions options, ILogger logger, Func<double>? random = null, Action<IThreadPoolWorkItem>? poolQueue = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        _time = options.TimeProvider;
        _limit = options.Limit ?? FanOutConcurrencyOptions.DefaultLimit(_time);
        _queueLimit = options.QueueLimit;
        _queuePerPermit = options.QueuePerPermit;
        _rejectionStart = options.RejectionStart;
        _queueTimeout = options.QueueTimeout;
        _sheddableWaitPerServiceTime = options.SheddableWaitPerServiceTime;
        _normalWaitPerServiceTime = options.NormalWaitPerServiceTime;
        _serviceTime = new ServiceTimeEstimate(_time);
        if (options.WatchThreadPoolLag)
        {
            _poolLag = new ThreadPoolLag(_time, poolQueue);
            _coresHold = new CoresHold(_time, _poolLag, _serviceTime, Environment.ProcessorCount);
        }

        _limiterFailure = options.LimiterFailure;
        _logger = logger;
        _random = random ?? Random.Shared.NextDouble;
        _priorityReserve = options.PriorityReserve;
        _reserveHoldTicks = (long)(ReserveHold.TotalSeconds * _time.TimestampFrequency);
        _queues = new LinkedList<QueuedRequest>[Enum.GetValues<RequestPriority>().Length];
        _lastArrival = new long[_queues.Length];
        Array.Fill(_lastArrival, long.MinValue / 2);
        for (var i = 0; i < _queues.Length; i++)
        {
            _queues[i] = new LinkedList<QueuedRequest>();
        }
    }

    /// <summary>The limit requests are admitted to.</summary>
    public ConcurrencyLimit Limit => _limit;

    /// <summary>Requests waiting right now.</summary>
    public int Queued => Volatile.Read(ref _queued);

    /// <summary>Permits held right now by requests this admission admitted (each gives it back with <see cref="Release"/>).</summary>
    public int Held => Volatile.Read(ref _held);

    /// <summary>The estimated median time an admitted request takes (from the times given to <see cref="Release"/>); null until one was given.</summary>
    public TimeSpan? ServiceTime => _serviceTime.Median;

    /// <summary>
    /// How long work waits in the thread pool now, when that is longer than a request takes to serve and than the pool's
    /// noise (else null; always null with <see cref="FanOutConcurrencyOptions.WatchThreadPoolLag"/> off): requests
    /// queue in front of the admission (the service's own CPU is its bottleneck), so a request served now is an overload
    /// for the limit, however fast its own service was.
    /// </summary>
    public TimeSpan? PoolLagBeyondService => _coresHold?.LagBeyondService;

    /// <summary>The most requests this admission may hold at <paramref name="now"/>: the cores while they are held (<see cref="CoresHold"/>), else no bound.</summary>
    private int CoresRoom(long now) => _coresHold?.Room(now) ?? int.MaxValue;

    /// <summary>Counts since start: admitted at once, admitted after queueing, refused, canceled while queued.</summary>
    public (long AdmittedAtOnce, long AdmittedFromQueue, long Refused, long Canceled) Counts =>
        (Interlocked.Read(ref _admittedAtOnce), Interlocked.Read(ref _admittedFromQueue), Interlocked.Read(ref _refused), Interlocked.Read(ref _canceled));

    /// <summary>The chance that a request of <paramref name="priority"/> that finds the queue <paramref name="fill"/> full is refused at once.</summary>
    /// <remarks>
    /// Normal requests ramp linearly from 0 at <paramref name="rejectionStart"/> to 1 at a full queue; sheddable ones over
    /// the half below (from <c>rejectionStart / 2</c> to <paramref name="rejectionStart"/>), so they are all refused before
    /// the first normal one is; critical ones never at random.
    /// </remarks>
    internal static double RefusalChance(RequestPriority priority, double fill, double rejectionStart) => priority switch
    {
        RequestPriority.Critical => 0,
        RequestPriority.Sheddable => Ramp(fill, rejectionStart / 2, rejectionStart),
        _ => Ramp(fill, rejectionStart, 1),
    };

    /// <summary>The longest a request of <paramref name="priority"/> waits in the queue, in measured service times (critical: unbounded, <see cref="FanOutConcurrencyOptions.QueueTimeout"/> only).</summary>
    /// <remarks>
    /// Sheddable: <paramref name="sheddableWait"/>. Normal: <paramref name="queuePerPermit"/>, the time a full queue takes to
    /// drain at the limit's pace (what a normal request waits in its own order), plus <paramref name="normalWait"/>, the
    /// allowance for the higher priorities served before it; never less than the sheddable bound, so a normal request never
    /// leaves the queue before a sheddable one that arrived with it.
    /// </remarks>
    internal static double WaitBound(RequestPriority priority, double sheddableWait, double normalWait, double queuePerPermit) => priority switch
    {
        RequestPriority.Sheddable => sheddableWait,
        RequestPriority.Normal => Math.Max(queuePerPermit + normalWait, sheddableWait),
        _ => double.PositiveInfinity,
    };

    private static double Ramp(double x, double from, double to) => x < from ? 0 : x >= to ? 1 : (x - from) / (to - from);

    /// <summary>
    /// The permits a request of <paramref name="priority"/> must leave free under a limit of <paramref name="current"/>:
    /// <c>floor(priorityReserve × current)</c> when a higher priority was seen lately (<paramref name="seenLately"/>, index =
    /// (int)priority), else none.
    /// </summary>
    /// <remarks>
    /// One reserve, kept for the highest priority about: every priority below it stays out of it. Rounded down, so it fits
    /// in the part of an adaptive limit that is queue anyway (the law settles near 1.25 x what the bottleneck serves at once:
    /// a fifth of the permits are requests waiting in the bottleneck's own queue); a small limit reserves nothing (4 x 0.2).
    /// The room a request may take is then <c>max(1, current - reserve)</c> permits held by this admission.
    /// </remarks>
    internal static int ReserveFor(RequestPriority priority, int current, double priorityReserve, ReadOnlySpan<bool> seenLately)
    {
        for (var above = (int)priority + 1; above < seenLately.Length; above++)
        {
            if (seenLately[above])
            {
                return (int)Math.Floor(priorityReserve * Math.Max(current, 1));
            }
        }

        return 0;
    }

    /// <summary>The most permits this admission may hold once a request of <paramref name="priority"/> takes one; <see cref="int.MaxValue"/> when no reserve stands.</summary>
    /// <param name="priority">The request's priority.</param>
    /// <param name="current">The limit's <see cref="ConcurrencyLimit.Current"/>, read by the caller outside the lock (user code).</param>
    /// <param name="now">A timestamp of <see cref="_time"/>.</param>
    private int RoomFor(RequestPriority priority, int current, long now)
    {
        if (_priorityReserve == 0 || (int)priority == _queues.Length - 1)
        {
            return int.MaxValue;
        }

        Span<bool> seenLately = stackalloc bool[_queues.Length];
        for (var level = (int)priority + 1; level < seenLately.Length; level++)
        {
            seenLately[level] = now - Volatile.Read(ref _lastArrival[level]) < _reserveHoldTicks;
        }

        var reserve = ReserveFor(priority, current, _priorityReserve, seenLately);
        return reserve == 0 ? int.MaxValue : Math.Max(1, current - reserve);
    }

    /// <summary>Takes a place in <see cref="_held"/> if fewer than <paramref name="room"/> are taken: one compare-and-swap, never a read-then-write.</summary>
    private bool TryReserve(int room)
    {
        var held = Volatile.Read(ref _held);
        while (held < room)
        {
            var seen = Interlocked.CompareExchange(ref _held, held + 1, held);
            if (seen == held)
            {
                return true;
            }

            held = seen;
        }

        return false;
    }

    /// <summary>Gives a place in <see cref="_held"/> back (a reservation the limit then refused); a pump parked for want of room starts again.</summary>
    private void ReturnPlace()
    {
        Interlocked.Decrement(ref _held);
        RestartParkedPump();
    }

    /// <summary>Gives back the permit of a request admitted with <see cref="AdmissionStatus.Admitted"/>: its owner calls this exactly once.</summary>
    /// <param name="served">How long the request took from its admission, when it was served (a success); null otherwise, which teaches the service time nothing.</param>
    public void Release(TimeSpan? served = null)
    {
        if (served is { } time)
        {
            _serviceTime.Add(time);
        }

        // The place first, then the permit: a pump woken by the permit then finds the room too.
        Interlocked.Decrement(ref _held);
        try
        {
            _limit.Release();
        }
        finally
        {
            RestartParkedPump();
        }
    }

    /// <summary>Teaches the service time what a served request took, when its permit went back before its outcome was known (<see cref="Release"/> with no time).</summary>
    public void AddServiceTime(TimeSpan served) => _serviceTime.Add(served);

    /// <summary>After a place in <see cref="_held"/> was given back: starts the pump if it parked for want of room.</summary>
    /// <remarks>
    /// Called after the decrement. A pump that read the old count (under the lock) parked before this thread takes the lock,
    /// so this sees <see cref="_pumping"/> false and restarts it; a pump that reads after the decrement sees the room.
    /// </remarks>
    private void RestartParkedPump()
    {
        if (Volatile.Read(ref _queued) == 0)
        {
            return;
        }

        var start = false;
        lock (_lock)
        {
            AssertInvariants();
            if (_queued > 0 && !_pumping)
            {
                _pumping = true;
                _parkedFor = -1;
                start = true;
            }
        }

        if (start)
        {
            _ = PumpAsync();
        }
    }

    /// <summary>Admits, queues or refuses a request; <see cref="AdmissionStatus.Admitted"/> hands the caller a permit to give back with <see cref="Release"/>.</summary>
    public ValueTask<AdmissionStatus> AdmitAsync(RequestPriority priority, CancellationToken aborted) =>
        TryAdmit(priority) is { } status ? new ValueTask<AdmissionStatus>(status) : EnqueueAsync(priority, aborted);

    /// <summary>
    /// Admits a request at once if it may skip the queue and a permit is free (<see cref="AdmissionStatus.Admitted"/>, or
    /// <see cref="AdmissionStatus.AdmittedWithoutPermit"/> when the limit threw and fails open; <see cref="AdmissionStatus.Refused"/>
    /// when it fails closed); <see langword="null"/> when the request would have to queue. Never waits.
    /// </summary>
    public AdmissionStatus? TryAdmit(RequestPriority priority)
    {
        var now = _time.GetTimestamp();
        if (_priorityReserve > 0)
        {
            // Seen lately: its reserve stands for the priorities below it. Written at most a few times per hold, not per request.
            ref var last = ref _lastArrival[(int)priority];
            if (now - Volatile.Read(ref last) > _reserveHoldTicks / 16)
            {
                Volatile.Write(ref last, now);
            }
        }

        // Fast path: nobody of this priority or above queued here, room under the reserve, and a permit free (TryAcquire also
        // fails while others wait on a shared limit, this admission's pump included). Lower priorities waiting (for the reserve,
        // say) do not hold a critical request back: the queue would serve it first anyway.
        if (Volatile.Read(ref _highestWaiting) >= (int)priority)
        {
            return null;
        }

        bool acquired;
        var reserved = false;
        try
        {
            if (!TryReserve(Math.Min(CoresRoom(now), _priorityReserve == 0 ? int.MaxValue : RoomFor(priority, _limit.Current, now))))
            {
                return null; // room taken: wait in the queue for a place given back
            }

            reserved = true;
            acquired = _limit.TryAcquire();
        }
        catch (Exception exception)
        {
            if (reserved)
            {
                ReturnPlace();
            }

            return OnLimiterFailure(exception);
        }

        if (acquired)
        {
            Interlocked.Increment(ref _admittedAtOnce);
            return AdmissionStatus.Admitted;
        }

        ReturnPlace();
        return null;
    }

    private async ValueTask<AdmissionStatus> EnqueueAsync(RequestPriority priority, CancellationToken aborted)
    {
        if (aborted.IsCancellationRequested)
        {
            Interlocked.Increment(ref _canceled);
            return AdmissionStatus.Canceled;
        }

        int current;
        try
        {
            current = _limit.Current;
        }
        catch (Exception exception)
        {
            return OnLimiterFailure(exception);
        }

        var cores = CoresRoom(_time.GetTimestamp());
        current = Math.Min(current, cores);
        var capacity = (int)Math.Min(_queueLimit, Math.Ceiling(_queuePerPermit * Math.Max(current, 1)));
        if (cores < int.MaxValue)
        {
            // Held at the cores, the limit's room above the bottleneck is gone: one waiting request per core keeps each busy
            // between arrivals (a hand-tuned ConcurrencyLimiter's C + C).
            capacity = Math.Min(_queueLimit, Math.Max(capacity, cores));
        }

        if (priority == RequestPriority.Critical)
        {
            // Critical requests may queue three limits' worth, or a stall's worth of service, even when the others get less (see CriticalQueueStall).
            var permits = Math.Max(current, 1);
            var room = _serviceTime.Median is { } service && service > TimeSpan.Zero
                ? Math.Max(CriticalQueueLimits * permits, Math.Ceiling(permits * (CriticalQueueStall / service)))
                : CriticalQueueLimits * permits;
            capacity = (int)Math.Min(_queueLimit, Math.Max(capacity, room));
        }

        var timeout = _queueTimeout;
        if (priority != RequestPriority.Critical && _serviceTime.Median is { } serviceTime)
        {
            // Behind the higher priorities, a sheddable or normal request's wait is what makes the slowest admitted answers:
            // bounded in service times (see WaitBound), or refused at once when the bound is none.
            var bound = serviceTime * WaitBound(priority, _sheddableWaitPerServiceTime, _normalWaitPerServiceTime, _queuePerPermit);
            if (bound <= TimeSpan.Zero)
            {
                Interlocked.Increment(ref _refused);
                return AdmissionStatus.Refused;
            }

            timeout = bound < timeout ? bound : timeout;
        }

        var draw = _random();
        var request = new QueuedRequest(this, priority);
        QueuedRequest? evicted = null;
        var startPump = false;
        lock (_lock)
        {
            AssertInvariants();
            if (_queued >= capacity)
            {
                // Full: a higher priority takes the place of the newest request of the lowest priority below it.
                evicted = TakeNewestBelow(priority);
                if (evicted is null)
                {
                    Interlocked.Increment(ref _refused);
                    return AdmissionStatus.Refused;
                }
            }
            else if (draw < RefusalChance(priority, Math.Min(1.0, (double)_queued / capacity), _rejectionStart))
            {
                Interlocked.Increment(ref _refused);
                return AdmissionStatus.Refused;
            }

            _queues[(int)priority].AddLast(request.Node);
            if (evicted is null)
            {
                _queued++; // an eviction's place is taken over: the count stays
            }

            OnQueueChanged();

            // A pump parked for want of room for a request at or above this one's priority would find none for this one either.
            if (!_pumping && (int)priority > _parkedFor)
            {
                _pumping = true;
                _parkedFor = -1;
                startPump = true;
            }
        }

        if (evicted is not null)
        {
            Interlocked.Increment(ref _refused);
            evicted.Complete(AdmissionStatus.Refused);
        }

        request.Arm(aborted, _time, timeout);
        if (startPump)
        {
            _ = PumpAsync();
        }

        try
        {
            return await request.Task.ConfigureAwait(false);
        }
        finally
        {
            request.Disarm();
        }
    }

    /// <summary>Takes a request out of the queue if it still waits (its client went away, or it waited too long).</summary>
    internal void Withdraw(QueuedRequest request, AdmissionStatus status, bool timedOut)
    {
        lock (_lock)
        {
            AssertInvariants();
            if (request.Node.List is null)
            {
                return; // already granted, evicted or withdrawn: its remover completes it
            }

            request.Node.List.Remove(request.Node);
            _queued--;
            OnQueueChanged();
        }

        Interlocked.Increment(ref timedOut ? ref _refused : ref _canceled);
        request.Complete(status);
    }

    /// <summary>Takes permits for the queue one at a time while it has requests, and hands each to the highest-priority, oldest one.</summary>
    private async Task PumpAsync()
    {
        while (true)
        {
            bool acquired;
            try
            {
                acquired = await _limit.WaitAsync(_disposed.Token).ConfigureAwait(false);
            }
            catch (Exception exception)
            {
                FailQueued(OnLimiterFailure(exception));
                return;
            }

            if (!acquired)
            {
                FailQueued(AdmissionStatus.Refused); // disposed: the host is stopping
                return;
            }

            // The limit's value is user code for a custom limit: read before the lock. If it throws, no reserve this time.
            var current = 0;
            if (_priorityReserve > 0)
            {
                try
                {
                    current = _limit.Current;
                }
                catch (Exception exception)
                {
                    s_limiterFailed(_logger, exception);
                }
            }

            var now = _time.GetTimestamp();
            QueuedRequest? next = null;
            var more = false;
            lock (_lock)
            {
                AssertInvariants();
                var head = PeekOldestHighest();
                if (head is null)
                {
                    _pumping = false;
                }
                else if (!TryReserve(Math.Min(CoresRoom(now), current > 0 ? RoomFor(head.Priority, current, now) : int.MaxValue)))
                {
                    // The head's room is taken (the reserve, or the cores' hold): park until one of this admission's permits comes
                    // back. Lower priorities have less room still; a higher arrival restarts the pump.
                    _pumping = false;
                    _parkedFor = (int)head.Priority;
                }
                else
                {
                    head.Node.List!.Remove(head.Node);
                    _queued--;
                    OnQueueChanged();
                    next = head;
                    more = _queued > 0;
                    _pumping = more;
                }
            }

            if (next is null)
            {
                // Everyone it waited for left (canceled, timed out), or the head has no room: the permit goes straight back.
                // A request arriving now fails TryAcquire until it does, queues, and starts a pump of its own that gets it.
                _limit.Release();
                return;
            }

            Interlocked.Increment(ref _admittedFromQueue);
            next.Complete(AdmissionStatus.Admitted);
            if (!more)
            {
                return;
            }
        }
    }

    /// <summary>Completes every queued request with <paramref name="status"/> (the limit threw, or the host stops).</summary>
    private void FailQueued(AdmissionStatus status)
    {
        var failed = new List<QueuedRequest>();
        lock (_lock)
        {
            AssertInvariants();
            foreach (var queue in _queues)
            {
                while (queue.First is { } node)
                {
                    queue.RemoveFirst();
                    failed.Add(node.Value);
                }
            }

            _queued = 0;
            OnQueueChanged();
            _pumping = false;
            _parkedFor = -1;
        }

        foreach (var request in failed)
        {
            // AdmittedWithoutPermit (the limit threw, fail open) holds no permit: nothing to count in _held.
            Interlocked.Increment(ref status == AdmissionStatus.Refused ? ref _refused : ref _admittedFromQueue);
            request.Complete(status);
        }
    }

    private AdmissionStatus OnLimiterFailure(Exception exception)
    {
        s_limiterFailed(_logger, exception);
        return _limiterFailure == LimiterFailureMode.Admit ? AdmissionStatus.AdmittedWithoutPermit : AdmissionStatus.Refused;
    }

    /// <summary>Publishes <see cref="_highestWaiting"/> after the queues changed; under <see cref="_lock"/>.</summary>
    private void OnQueueChanged()
    {
        var highest = _queues.Length - 1;
        while (highest >= 0 && _queues[highest].Count == 0)
        {
            highest--;
        }

        Volatile.Write(ref _highestWaiting, highest);
    }

    private QueuedRequest? PeekOldestHighest()
    {
        for (var i = _queues.Length - 1; i >= 0; i--)
        {
            if (_queues[i].First is { } node)
            {
                return node.Value;
            }
        }

        return null;
    }

    /// <summary>Removes the newest request of the lowest priority below <paramref name="priority"/>; the caller completes it.</summary>
    private QueuedRequest? TakeNewestBelow(RequestPriority priority)
    {
        for (var i = 0; i < (int)priority; i++)
        {
            if (_queues[i].Last is { } node)
            {
                _queues[i].RemoveLast();
                return node.Value; // _queued unchanged: the arrival takes its place
            }
        }

        return null;
    }

    /// <summary>Refuses what still waits (the host stops): the pump's wait ends, and a queue whose pump parked is refused here. The source is not disposed: a late arrival may still read its token.</summary>
    public void Dispose()
    {
        _poolLag?.Dispose();
        _disposed.Cancel();
        FailQueued(AdmissionStatus.Refused);
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_queued == _queues.Sum(q => q.Count));
        Debug.Assert(_queued == 0 || _pumping || (_parkedFor >= 0 && _queues.Skip(_parkedFor + 1).All(q => q.Count == 0)), "a waiting request has a pump, or a parked one that would refuse it room");
        Debug.Assert(!_pumping || _parkedFor == -1);
        Debug.Assert(_highestWaiting == Array.FindLastIndex(_queues, q => q.Count > 0));
    }
}
