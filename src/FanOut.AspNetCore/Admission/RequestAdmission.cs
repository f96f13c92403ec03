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

    private readonly ConcurrencyLimit _limit;
    private readonly int _queueLimit;
    private readonly double _queuePerPermit;
    private readonly double _rejectionStart;
    private readonly TimeSpan _queueTimeout;
    private readonly LimiterFailureMode _limiterFailure;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly Func<double> _random;

    /// <summary>Guards the queues, <see cref="_queued"/> and <see cref="_pumping"/>; no user code and no completion under it.</summary>
    private readonly Lock _lock = new();

    /// <summary>Waiting requests, one FIFO list per priority (index = (int)priority).</summary>
    private readonly LinkedList<QueuedRequest>[] _queues;

    /// <summary>Requests in <see cref="_queues"/>; written under <see cref="_lock"/>, read without it by the fast path.</summary>
    private int _queued;

    /// <summary>True while the pump runs (it then waits for a permit, or is about to hand one over).</summary>
    private bool _pumping;

    private readonly CancellationTokenSource _disposed = new();

    private long _admittedAtOnce;
    private long _admittedFromQueue;
    private long _refused;
    private long _canceled;

    public RequestAdmission(FanOutConcurrencyOptions options, ILogger logger, Func<double>? random = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        _time = options.TimeProvider;
        _limit = options.Limit ?? FanOutConcurrencyOptions.DefaultLimit(_time);
        _queueLimit = options.QueueLimit;
        _queuePerPermit = options.QueuePerPermit;
        _rejectionStart = options.RejectionStart;
        _queueTimeout = options.QueueTimeout;
        _limiterFailure = options.LimiterFailure;
        _logger = logger;
        _random = random ?? Random.Shared.NextDouble;
        _queues = new LinkedList<QueuedRequest>[Enum.GetValues<RequestPriority>().Length];
        for (var i = 0; i < _queues.Length; i++)
        {
            _queues[i] = new LinkedList<QueuedRequest>();
        }
    }

    /// <summary>The limit requests are admitted to.</summary>
    public ConcurrencyLimit Limit => _limit;

    /// <summary>Requests waiting right now.</summary>
    public int Queued => Volatile.Read(ref _queued);

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

    private static double Ramp(double x, double from, double to) => x < from ? 0 : x >= to ? 1 : (x - from) / (to - from);

    /// <summary>Admits, queues or refuses a request; <see cref="AdmissionStatus.Admitted"/> hands the caller a permit to give back.</summary>
    public ValueTask<AdmissionStatus> AdmitAsync(RequestPriority priority, CancellationToken aborted)
    {
        // Fast path: nobody queued here and a permit free (TryAcquire also fails while others wait on a shared limit).
        if (Volatile.Read(ref _queued) == 0)
        {
            bool acquired;
            try
            {
                acquired = _limit.TryAcquire();
            }
            catch (Exception exception)
            {
                return new ValueTask<AdmissionStatus>(OnLimiterFailure(exception));
            }

            if (acquired)
            {
                Interlocked.Increment(ref _admittedAtOnce);
                return new ValueTask<AdmissionStatus>(AdmissionStatus.Admitted);
            }
        }

        return EnqueueAsync(priority, aborted);
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

        var capacity = (int)Math.Min(_queueLimit, Math.Ceiling(_queuePerPermit * Math.Max(current, 1)));
        if (priority == RequestPriority.Critical)
        {
            // Critical requests may queue up to three limits' worth even when the others get less (see CriticalQueueLimits).
            capacity = (int)Math.Min(_queueLimit, Math.Max(capacity, CriticalQueueLimits * Math.Max(current, 1)));
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
            if (!_pumping)
            {
                _pumping = true;
                startPump = true;
            }
        }

        if (evicted is not null)
        {
            Interlocked.Increment(ref _refused);
            evicted.Complete(AdmissionStatus.Refused);
        }

        request.Arm(aborted, _time, _queueTimeout);
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

            QueuedRequest? next;
            var more = false;
            lock (_lock)
            {
                AssertInvariants();
                next = TakeOldestHighest();
                if (next is not null)
                {
                    _queued--;
                }

                more = _queued > 0;
                _pumping = more;
            }

            if (next is null)
            {
                // Everyone it waited for left (canceled, timed out): the permit goes straight back. A request arriving now
                // fails TryAcquire until it does, queues, and starts a pump of its own (_pumping is false) that gets it.
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
            _pumping = false;
        }

        foreach (var request in failed)
        {
            Interlocked.Increment(ref status == AdmissionStatus.Refused ? ref _refused : ref _admittedFromQueue);
            request.Complete(status);
        }
    }

    private AdmissionStatus OnLimiterFailure(Exception exception)
    {
        s_limiterFailed(_logger, exception);
        return _limiterFailure == LimiterFailureMode.Admit ? AdmissionStatus.AdmittedWithoutPermit : AdmissionStatus.Refused;
    }

    private QueuedRequest? TakeOldestHighest()
    {
        for (var i = _queues.Length - 1; i >= 0; i--)
        {
            if (_queues[i].First is { } node)
            {
                _queues[i].RemoveFirst();
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

    /// <summary>Refuses what still waits (the host stops): the pump's wait ends. The source is not disposed: a late arrival may still read its token.</summary>
    public void Dispose() => _disposed.Cancel();

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_queued == _queues.Sum(q => q.Count));
        Debug.Assert(_queued == 0 || _pumping);
    }
}
