namespace FanOut.Lab.ServerOverload;

/// <summary>An in-process dependency that serves <c>capacity</c> calls at once, each taking <c>serviceTime</c>, and queues the rest (a connection pool's wait).</summary>
public sealed class SimulatedBackend(int capacity, TimeSpan serviceTime) : IOverloadBackend
{
    private readonly SemaphoreSlim _slots = new(capacity, capacity);

    /// <inheritdoc/>
    public string Describe => $"simulated dependency: {capacity} at once, {serviceTime.TotalMilliseconds:0} ms each, an unbounded FIFO queue beyond";

    /// <inheritdoc/>
    public double CapacityPerSecond => capacity / serviceTime.TotalSeconds;

    /// <inheritdoc/>
    public async Task CallAsync(CancellationToken cancellationToken)
    {
        await _slots.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await Task.Delay(serviceTime, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _slots.Release();
        }
    }

    /// <inheritdoc/>
    public ValueTask DisposeAsync()
    {
        _slots.Dispose();
        return ValueTask.CompletedTask;
    }
}
