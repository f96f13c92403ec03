namespace FanOut.Redis;

/// <summary>A worker waiting for a permit of a <see cref="RedisConcurrencyLimit"/>: allocated only when no idle lease is here.</summary>
/// <remarks>
/// The waiter is queued before it registers on its token (the registration runs outside the owner's lock), so another
/// thread may grant or fail it while it registers. <see cref="_state"/> decides which side unregisters: a completion that
/// finds the registration stored takes it down; a registration that finds the waiter already completed takes itself
/// down. Either way no registration outlives the wait (it would keep this waiter, and its owner, alive as long as the
/// token's source).
/// </remarks>
internal sealed class LeaseWaiter(RedisConcurrencyLimit owner, long startTimestamp) : TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously)
{
    private const int Waiting = 0;
    private const int Registered = 1;
    private const int Completed = 2;

    /// <summary><see cref="Waiting"/>, then <see cref="Registered"/> once <see cref="_registration"/> is stored, and <see cref="Completed"/> once granted or failed.</summary>
    private int _state;

    /// <summary>Written once, before <see cref="_state"/> becomes <see cref="Registered"/>; read only after that.</summary>
    private CancellationTokenRegistration _registration;

    /// <summary>This waiter's place in the owner's queue; its List is null once granted, failed or removed.</summary>
    internal LinkedListNode<LeaseWaiter>? Node { get; set; }

    /// <summary>Chains the waiters one pass granted or failed, so they are completed after the owner's lock is released.</summary>
    internal LeaseWaiter? Next { get; set; }

    /// <summary>When the wait began, from the owner's <see cref="TimeProvider"/>.</summary>
    internal long StartTimestamp => startTimestamp;

    /// <summary>Registers the cancellation of a queued waiter; undone at once if the waiter was completed meanwhile.</summary>
    internal void Register(CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled)
        {
            return;
        }

        _registration = cancellationToken.UnsafeRegister(static state => ((LeaseWaiter)state!).Cancel(), this);
        if (Interlocked.CompareExchange(ref _state, Registered, Waiting) == Completed)
        {
            // Granted or failed while we registered: the completion saw no registration to take down, so we do.
            // Unregister, not Dispose: it never waits for a callback running on another thread (that one finds the node gone).
            _registration.Unregister();
        }
    }

    internal void Grant()
    {
        Unregister();
        TrySetResult(true);
    }

    internal void Fail(Exception exception)
    {
        Unregister();
        TrySetException(exception);
    }

    /// <summary>Marks the waiter completed and takes its registration down if one was stored.</summary>
    private void Unregister()
    {
        if (Interlocked.Exchange(ref _state, Completed) == Registered)
        {
            _registration.Unregister();
        }
    }

    private void Cancel()
    {
        if (owner.TryRemove(this))
        {
            TrySetResult(false);
        }
    }
}
