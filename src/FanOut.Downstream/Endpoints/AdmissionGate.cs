using System.Diagnostics;

namespace FanOut.Downstream.Endpoints;

/// <summary>The server's slots and queue: at most <see cref="Capacity"/> requests served at once, up to <see cref="QueueLimit"/> more
/// waiting oldest first, the rest turned away; both may change while requests are in it (<see cref="Resize"/>).</summary>
/// <remarks>
/// <para>One lock guards the counts and the queue, so a resize is atomic against every admission: a request either sees the old
/// sizes or the new ones, never a mix. Lowering the capacity never interrupts a request being served: no new one is admitted
/// until the ones being served have ended below the new capacity. Lowering the queue turns away the newest waiters beyond it;
/// raising the capacity admits waiters at once.</para>
/// <para>Waiters are completed under the lock, but their continuations run asynchronously (the task sources are created with
/// <see cref="TaskCreationOptions.RunContinuationsAsynchronously"/>), so no request's code runs under it.</para>
/// </remarks>
internal sealed class AdmissionGate
{
    private readonly Lock _lock = new();
    private readonly LinkedList<TaskCompletionSource<bool>> _waiting = new();
    private int _capacity;
    private int _queueLimit;
    private int _serving;

    public AdmissionGate(int capacity, int queueLimit)
    {
        _capacity = capacity;
        _queueLimit = queueLimit;
    }

    /// <summary>Requests served at once at most, now.</summary>
    public int Capacity
    {
        get
        {
            lock (_lock)
            {
                return _capacity;
            }
        }
    }

    /// <summary>Requests that may wait for a slot, now.</summary>
    public int QueueLimit
    {
        get
        {
            lock (_lock)
            {
                return _queueLimit;
            }
        }
    }

    /// <summary>Requests waiting for a slot now.</summary>
    public int Queued
    {
        get
        {
            lock (_lock)
            {
                return _waiting.Count;
            }
        }
    }

    /// <summary>Takes a slot, waits for one in the queue, or is turned away: true when the caller holds a slot (and must call
    /// <see cref="Exit"/> once), false when it was turned away (full queue, or a resize dropped its place).</summary>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> fired while the request waited; it holds nothing.</exception>
    public async ValueTask<bool> EnterAsync(CancellationToken cancellationToken)
    {
        TaskCompletionSource<bool> waiter;
        LinkedListNode<TaskCompletionSource<bool>> node;
        lock (_lock)
        {
            AssertInvariants();
            if (_serving < _capacity && _waiting.Count == 0)
            {
                _serving++;
                return true;
            }

            if (_waiting.Count >= _queueLimit)
            {
                return false;
            }

            waiter = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            node = _waiting.AddLast(waiter);
        }

        // Registered outside the lock: a token that has already fired runs the callback inline, and it takes the lock.
        using var withdraw = cancellationToken.Register(() => Withdraw(node));
        return await waiter.Task.ConfigureAwait(false);
    }

    /// <summary>Gives back a slot taken by <see cref="EnterAsync"/>; the oldest waiter that now fits gets it.</summary>
    public void Exit()
    {
        lock (_lock)
        {
            _serving--;
            AdmitWaiters();
            AssertInvariants();
        }
    }

    /// <summary>Sets the capacity and the queue in one step; requests being served keep their slots.</summary>
    public void Resize(int capacity, int queueLimit)
    {
        lock (_lock)
        {
            _capacity = capacity;
            _queueLimit = queueLimit;
            AdmitWaiters();
            while (_waiting.Count > _queueLimit)
            {
                var newest = _waiting.Last!;
                _waiting.RemoveLast();
                newest.Value.TrySetResult(false);
            }

            AssertInvariants();
        }
    }

    /// <summary>A waiter's request was cancelled: leave the queue, unless a slot was already handed to it (then it owns the slot).</summary>
    private void Withdraw(LinkedListNode<TaskCompletionSource<bool>> node)
    {
        lock (_lock)
        {
            if (node.List is null)
            {
                // Already admitted or turned away: the awaiting request sees that result and handles it.
                return;
            }

            _waiting.Remove(node);
            node.Value.TrySetCanceled();
        }
    }

    private void AdmitWaiters()
    {
        while (_serving < _capacity && _waiting.First is { } oldest)
        {
            _waiting.RemoveFirst();
            _serving++;
            oldest.Value.TrySetResult(true);
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "The gate is touched under its lock.");
        Debug.Assert(_serving >= 0, "Slots are never given back twice.");
        Debug.Assert(_waiting.Count == 0 || _serving >= _capacity, "Nobody waits while a slot is free.");
    }
}
