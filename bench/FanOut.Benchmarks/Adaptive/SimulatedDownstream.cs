namespace FanOut.Benchmarks.Adaptive;

/// <summary>A downstream with hidden capacity C: it serves C calls at once; beyond that calls queue (FIFO) and latency rises.</summary>
public sealed class SimulatedDownstream(int capacity, TimeSpan serviceTime) : IDisposable
{
    private readonly SemaphoreSlim _servers = new(capacity, capacity);

    public int Capacity => capacity;

    public async ValueTask<int> CallAsync(int item, CancellationToken cancellationToken)
    {
        await _servers.WaitAsync(cancellationToken);
        try
        {
            await Task.Delay(serviceTime, cancellationToken);
            return item;
        }
        finally
        {
            _servers.Release();
        }
    }

    public void Dispose() => _servers.Dispose();
}
