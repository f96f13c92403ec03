namespace FanOut;

/// <summary>A worker waiting for a permit of a <see cref="ConcurrencyLimit"/>; allocated only when the pool is empty.</summary>
/// <remarks>
/// A waiter can be granted on another thread while it is still registering on its token. Whichever of <see cref="Register"/>
/// and <see cref="Grant"/> finishes second removes the registration, decided by one exchange on <see cref="_state"/>, so a
/// granted waiter never leaves a callback behind on a long-lived token.
/// </remarks>
internal sealed class PermitWaiter(ConcurrencyLimit owner) : TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously)
{
    internal static readonly Task<bool> s_true = System.Threading.Tasks.Task.FromResult(true);
    internal static readonly Task<bool> s_false = System.Threading.Tasks.Task.FromResult(false);

    private const int Waiting = 0;
    private const int Registered = 1;
    private const int Granted = 2;

    private CancellationTokenRegistration _registration;

    /// <summary><see cref="Waiting"/>, then <see cref="Registered"/> and/or <see cref="Granted"/>; written with interlocked operations only.</summary>
    private int _state;

    /// <summary>This waiter's place in the owner's queue; its List is null once granted or removed.</summary>
    internal LinkedListNode<PermitWaiter>? Node { get; set; }

    /// <summary>Chains the waiters one Drain granted, so they are completed after its lock is released.</summary>
    internal PermitWaiter? NextGranted { get; set; }

    internal void Register(CancellationToken cancellationToken)
    {
        if (!cancellationToken.CanBeCanceled)
        {
            return;
        }

        _registration = cancellationToken.UnsafeRegister(static state => ((PermitWaiter)state!).Cancel(), this);

        // Granted while we registered: Grant saw no registration to remove, so remove it here.
        if (Interlocked.CompareExchange(ref _state, Registered, Waiting) == Granted)
        {
            _registration.Unregister();
        }
    }

    internal void Grant()
    {
        // Unregister (not Dispose): a Cancel callback running right now finds the node gone and does nothing, so there is
        // nothing to wait for.
        if (Interlocked.Exchange(ref _state, Granted) == Registered)
        {
            _registration.Unregister();
        }

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
