namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>
/// docs/limits.md's recipe for a limit whose permits live elsewhere, verbatim: a semaphore, with the three Core methods and
/// <see cref="InFlight"/> overridden (and nothing the docs do not ask for).
/// </summary>
public sealed class SemaphoreLimit(int capacity) : ConcurrencyLimit
{
    private readonly SemaphoreSlim _permits = new(capacity, capacity);

    public override int Current => capacity;

    public override string Kind => "semaphore";

    public override int InFlight => capacity - _permits.CurrentCount;

    /// <summary>Called when a wait finds no permit and queues at the semaphore (the moment a waiter is really queued).</summary>
    public Action? OnQueued { get; set; }

    protected override bool TryAcquireCore() => _permits.Wait(0);

    protected override async Task<bool> WaitAsyncCore(CancellationToken cancellationToken)
    {
        try
        {
            var wait = _permits.WaitAsync(cancellationToken);
            if (!wait.IsCompleted)
            {
                OnQueued?.Invoke();
            }

            await wait.ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    protected override void ReleaseCore() => _permits.Release();
}
