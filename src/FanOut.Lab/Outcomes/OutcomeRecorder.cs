using System.Diagnostics;

namespace FanOut.Lab.Outcomes;

/// <summary>Records, for one run, what the items of a fan-out did around its trigger: the first failure or the caller's cancellation.</summary>
/// <remarks>
/// Items report their start and end; the trigger is stamped once (the first failure, or the moment the caller
/// cancelled); the observing strategy stamps the call's return. Counters are interlocked: items run on many threads.
/// </remarks>
public sealed class OutcomeRecorder(TimeProvider timeProvider)
{
    private const long NotYet = 0;

    private int _started;
    private int _startedAfterTrigger;
    private int _completed;
    private int _failed;
    private int _canceled;
    private int _running;
    private int _firstFailedItem = -1;
    private long _triggerTimestamp;
    private int _cancelAtItem = -1;
    private CancellationTokenSource? _cancelAtItemSource;

    /// <summary>A recorder on the system clock.</summary>
    public OutcomeRecorder()
        : this(TimeProvider.System)
    {
    }

    /// <summary>Items whose work is running now.</summary>
    public int Running => Volatile.Read(ref _running);

    /// <summary>The time source of the stamps.</summary>
    public TimeProvider TimeProvider => timeProvider;

    /// <summary>Forgets the previous run; <paramref name="cancelAtItem"/> (when not negative) makes the start of that item cancel <paramref name="source"/>.</summary>
    public void Reset(int cancelAtItem = -1, CancellationTokenSource? source = null)
    {
        Debug.Assert(Running == 0, "a run starts with no item running");
        _started = 0;
        _startedAfterTrigger = 0;
        _completed = 0;
        _failed = 0;
        _canceled = 0;
        _firstFailedItem = -1;
        _cancelAtItem = cancelAtItem;
        _cancelAtItemSource = source;
        Volatile.Write(ref _triggerTimestamp, NotYet);
    }

    /// <summary>An item's work starts.</summary>
    public void Started(int item)
    {
        Interlocked.Increment(ref _started);
        Interlocked.Increment(ref _running);
        if (Volatile.Read(ref _triggerTimestamp) != NotYet)
        {
            Interlocked.Increment(ref _startedAfterTrigger);
        }

        if (item == _cancelAtItem && _cancelAtItemSource is { } source)
        {
            Trigger();
            source.Cancel();
        }
    }

    /// <summary>An item's work ran to its end.</summary>
    public void Completed()
    {
        Interlocked.Increment(ref _completed);
        Interlocked.Decrement(ref _running);
    }

    /// <summary>An item is about to throw its failure; the first one stamps the trigger.</summary>
    public void Failed(int item)
    {
        Interlocked.Increment(ref _failed);
        if (Interlocked.CompareExchange(ref _firstFailedItem, item, -1) == -1)
        {
            Trigger();
        }

        Interlocked.Decrement(ref _running);
    }

    /// <summary>An item saw the cancellation and stopped.</summary>
    public void Canceled()
    {
        Interlocked.Increment(ref _canceled);
        Interlocked.Decrement(ref _running);
    }

    /// <summary>Stamps the trigger (the caller cancels now), unless it is already stamped.</summary>
    public void Trigger() =>
        Interlocked.CompareExchange(ref _triggerTimestamp, Math.Max(1, timeProvider.GetTimestamp()), NotYet);

    /// <summary>The run's outcome, once the call returned at <paramref name="returnedAt"/> (a <see cref="TimeProvider"/> timestamp).</summary>
    /// <param name="returnedAt">When the call returned.</param>
    /// <param name="runningAtReturn">Items still running when it returned.</param>
    /// <param name="call">What the call did: its exception (or none) and its final state.</param>
    public OutcomeRunMetrics Collect(long returnedAt, int runningAtReturn, CallOutcome call)
    {
        ArgumentNullException.ThrowIfNull(call);
        var trigger = Volatile.Read(ref _triggerTimestamp);
        return new OutcomeRunMetrics
        {
            ItemsStarted = Volatile.Read(ref _started),
            StartedAfterTrigger = Volatile.Read(ref _startedAfterTrigger),
            Completed = Volatile.Read(ref _completed),
            Failed = Volatile.Read(ref _failed),
            Canceled = Volatile.Read(ref _canceled),
            FirstFailedItem = Volatile.Read(ref _firstFailedItem) is var first and >= 0 ? first : null,
            StopMs = trigger == NotYet ? null : Math.Max(0, timeProvider.GetElapsedTime(trigger, returnedAt).TotalMilliseconds),
            RunningAtReturn = runningAtReturn,
            FinalState = call.FinalState,
            Threw = call.Threw,
            ThrewItem = call.ThrewItem,
            ExceptionsReachable = call.ExceptionsReachable,
            CancellationsReachable = call.CancellationsReachable,
            FailuresReachable = call.FailuresReachable,
            FailuresIndexedByApi = call.FailuresIndexedByApi,
        };
    }
}
