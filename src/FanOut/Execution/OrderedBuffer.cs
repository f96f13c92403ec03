using System.Diagnostics;

namespace FanOut.Execution;

/// <summary>
/// Hands a stream's results to its consumer in source order. A window of <c>capacity</c> items bounds how far workers may run
/// ahead of the consumer: a worker takes a window slot before claiming an item and the consumer frees it after yielding
/// that item, so a slow first item holds back at most <c>capacity</c> finished results (back-pressure, not unbounded buffering).
/// </summary>
internal sealed class OrderedBuffer<TResult>
{
    private const byte Empty = 0;
    private const byte HasValue = 1;
    private const byte Skipped = 2;

    /// <summary>Guards the ring, <see cref="_next"/>, <see cref="_completed"/> and <see cref="_consumer"/>.</summary>
    private readonly Lock _lock = new();
    private readonly SemaphoreSlim _window;
    private readonly TResult[] _values;
    private readonly byte[] _states;

    /// <summary>Index of the next item to yield; item i lives in slot i % capacity (the window keeps i below _next + capacity).</summary>
    private long _next;
    private bool _completed;

    /// <summary>The consumer, when it waits for the next item.</summary>
    private TaskCompletionSource<bool>? _consumer;

    public OrderedBuffer(int capacity, long firstIndex = 0)
    {
        _next = firstIndex;
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
        lock (_lock)
        {
            AssertInvariants();
            var slot = (int)(_next % _values.Length);
            var state = _states[slot];
            if (state == Empty)
            {
                value = default!;
                hasValue = false;
                return false;
            }

            value = _values[slot];
            hasValue = state == HasValue;
            _values[slot] = default!;
            _states[slot] = Empty;
            _next++;
        }

        _window.Release();
        return true;
    }

    /// <summary>Waits until the next item is done (true) or no more will come (false).</summary>
    public Task<bool> WaitAsync()
    {
        lock (_lock)
        {
            AssertInvariants();
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
