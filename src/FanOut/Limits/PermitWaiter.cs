namespace FanOut;

/// <summary>A worker waiting for a permit of a <see cref="ConcurrencyLimit"/>; allocated only when the pool is empty.</summary>
internal sealed class PermitWaiter(ConcurrencyLimit owner) : TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously)
{
    internal static readonly Task<bool> s_true = System.Threading.Tasks.Task.FromResult(true);
    internal static readonly Task<bool> s_false = System.Threading.Tasks.Task.FromResult(false);

    private CancellationTokenRegistration _registration;

    /// <summary>This waiter's place in the owner's queue; its List is null once granted or removed.</summary>
    internal LinkedListNode<PermitWaiter>? Node { get; set; }

    /// <summary>Chains the waiters one Drain granted, so they are completed after its lock is released.</summary>
    internal PermitWaiter? NextGranted { get; set; }

    internal void Register(CancellationToken cancellationToken)
    {
        if (cancellationToken.CanBeCanceled)
        {
            _registration = cancellationToken.UnsafeRegister(static state => ((PermitWaiter)state!).Cancel(), this);
        }
    }

    internal void Grant()
    {
        // A registration made after the grant is harmless: Cancel finds the node gone and does nothing.
        _registration.Dispose();
        TrySetResult(true);
    }

    private void Cancel()
    {
        if (owner.TryRemove(this))
        {
            TrySetResult(false);
        }
    }
}
