namespace FanOut.Redis;

/// <summary>A worker waiting for a permit of a <see cref="RedisConcurrencyLimit"/>: allocated only when no idle lease is here.</summary>
internal sealed class LeaseWaiter(RedisConcurrencyLimit owner, long startTimestamp) : TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously)
{
    private CancellationTokenRegistration _registration;

    /// <summary>This waiter's place in the owner's queue; its List is null once granted, failed or removed.</summary>
    internal LinkedListNode<LeaseWaiter>? Node { get; set; }

    /// <summary>Chains the waiters one pass granted or failed, so they are completed after the owner's lock is released.</summary>
    internal LeaseWaiter? Next { get; set; }

    /// <summary>When the wait began, from the owner's <see cref="TimeProvider"/>.</summary>
    internal long StartTimestamp => startTimestamp;

    internal void Register(CancellationToken cancellationToken)
    {
        if (cancellationToken.CanBeCanceled)
        {
            _registration = cancellationToken.UnsafeRegister(static state => ((LeaseWaiter)state!).Cancel(), this);
        }
    }

    internal void Grant()
    {
        // A registration made after the grant is harmless: Cancel finds the node gone and does nothing.
        _registration.Dispose();
        TrySetResult(true);
    }

    internal void Fail(Exception exception)
    {
        _registration.Dispose();
        TrySetException(exception);
    }

    private void Cancel()
    {
        if (owner.TryRemove(this))
        {
            TrySetResult(false);
        }
    }
}
