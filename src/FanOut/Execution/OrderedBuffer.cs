using System.Diagnostics;

namespace FanOut.Execution;

/// <summary>
/// Hands a stream's results to its consumer in source order. A window of <c>capacity</c> items bounds how far workers may run
/// ahead of the consumer: a worker takes a window slot before claiming an item and the consumer frees it after yielding
/// that item, so a slow first item holds back at most <c>capacity</c> finished results (back-pressure, not unbounded buffering).
/// </summary>
/// <remarks>
/// A FailFast failure stops the buffer at its index (<see cref="StopAt"/>): nothing from that index on is handed out, even
/// results already stored, so the consumer sees every success before the failure and then the failure, never a later
/// result first. With a <see cref="CommittedPrefix"/>, the consumer advances it as it comes back for the next item.
/// </remarks>
internal sealed class OrderedBuffer<TResult>
{
    private const byte Empty = 0;
    private const byte HasValue = 1;
    private const byte Skipped = 2;

    /// <summary>An outcome handed out like a value (<c>FanOutOutcomes</c>), but a failure: it ends the committed prefix.</summary>
    private const byte FailedValue = 3;

    /// <summary>Guards the ring, <see cref="_next"/>, <see cref="_completed"/> and <see cref="_consumer"/>.</summary>
    private readonly Lock _lock = new();
    private readonly SemaphoreSlim _window;
    private readonly TResult[] _values;
    private readonly byte[] _states;

    /// <summary>Index of the next item to yield; item i lives in slot i % capacity (the window keeps i below _next + capacity).</summary>
    private long _next;
    private bool _completed;

    /// <summary>No index from here on is handed out (a FailFast failure's index); <see cref="long.MaxValue"/> while none.</summary>
    private long _stopAt = long.MaxValue;

    /// <summary>Where the consumer reports its committed prefix; null when nobody asked.</summary>
    private readonly CommittedPrefix? _prefix;

    /// <summary>The prefix the item last handed out completes, committed when the consumer comes back; -1 when none. Consumer only.</summary>
    private long _pendingPrefix = -1;

    /// <summary>False once an item that did not succeed was handed out: the prefix never moves again. Consumer only.</summary>
    private bool _prefixIntact = true;

    /// <summary>The consumer, when it waits for the next item.</summary>
    private TaskCompletionSource<bool>? _consumer;

    public OrderedBuffer(int capacity, long firstIndex = 0, CommittedPrefix? prefix = null)
    {
        _next = firstIndex;
        _prefix = prefix;
        prefix?.Reset(firstIndex);
        _window = new SemaphoreSlim(capacity, capacity);
        _values = new TResult[capacity];
        _states = new byte[capacity];
    }

    public ValueTask<bool> EnterWindowAsync(CancellationToken cancellationToken)
    {
        if (_window.Wait(0))
        {
            return new ValueTask<bool>(true);
        }

        return WaitForWindowAsync(cancellationToken);
    }

    /// <summary>Frees a slot a worker took but did not use (the source was exhausted).</summary>
    public void LeaveWindow() => _window.Release();

    public void Set(long index, TResult value) => Store(index, value, HasValue);

    /// <summary>Stores an outcome to hand out that is a failure (it ends the committed prefix).</summary>
    public void SetFailed(long index, TResult value) => Store(index, value, FailedValue);

    /// <summary>A FailFast failure at <paramref name="index"/>: nothing from there on is handed out; the consumer goes to the failure.</summary>
    public void StopAt(long index)
    {
        TaskCompletionSource<bool>? consumer;
        lock (_lock)
        {
            AssertInvariants();
            _stopAt = Math.Min(_stopAt, index);
            consumer = _consumer;
            _consumer = null;
        }

        consumer?.TrySetResult(false);
    }

    public void Skip(long index) => Store(index, default!, Skipped);

    /// <summary>No more items will be stored.</summary>
    public void Complete()
    {
        TaskCompletionSource<bool>? consumer;
        lock (_lock)
        {
            _completed = true;
            consumer = _consumer;
            _consumer = null;
        }

        consumer?.TrySetResult(true);
    }

    /// <summary>Takes the next item if it is done; <paramref name="hasValue"/> is false for a failed (skipped) item.</summary>
    public bool TryTake(out TResult value, out bool hasValue)
    {
        // The consumer is back for the next item: it is done with the one handed out before.
        CommitPending();
        byte state;
        lock (_lock)
        {
            AssertInvariants();
            var slot = (int)(_next % _values.Length);
            state = _states[slot];
            if (state == Empty || _next >= _stopAt)
            {
                value = default!;
                hasValue = false;
                return false;
            }

            value = _values[slot];
            hasValue = state != Skipped;
            _values[slot] = default!;
            _states[slot] = Empty;
            _next++;
        }

        if (_prefix is not null && _prefixIntact)
        {
            if (state == HasValue)
            {
                _pendingPrefix = _next; // every item below _next succeeded; it counts once the consumer comes back
            }
            else
            {
                _prefixIntact = false;
            }
        }

        _window.Release();
        return true;
    }

    /// <summary>Waits until the next item is done (true) or no more will come (false).</summary>
    public Task<bool> WaitAsync()
    {
        CommitPending();
        lock (_lock)
        {
            AssertInvariants();
            if (_next >= _stopAt)
            {
                return PermitWaiter.s_false; // stopped at a FailFast failure: nothing more to hand out
            }

            if (_states[(int)(_next % _values.Length)] != Empty)
            {
                return PermitWaiter.s_true;
            }

            if (_completed)
            {
                return PermitWaiter.s_false;
            }

            _consumer = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            return _consumer.Task;
        }
    }

    private void CommitPending()
    {
        if (_pendingPrefix >= 0)
        {
            _prefix!.Advance(_pendingPrefix);
            _pendingPrefix = -1;
        }
    }

    private async ValueTask<bool> WaitForWindowAsync(CancellationToken cancellationToken)
    {
        try
        {
            await _window.WaitAsync(cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    private void Store(long index, TResult value, byte state)
    {
        TaskCompletionSource<bool>? consumer = null;
        lock (_lock)
        {
            AssertInvariants();
            var slot = (int)(index % _values.Length);
            Debug.Assert(_states[slot] == Empty, "The window keeps every unconsumed index in its own slot.");
            _values[slot] = value;
            _states[slot] = state;
            if (index == _next)
            {
                consumer = _consumer;
                _consumer = null;
            }
        }

        consumer?.TrySetResult(true);
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread);
        Debug.Assert(_next >= 0);
    }
}
