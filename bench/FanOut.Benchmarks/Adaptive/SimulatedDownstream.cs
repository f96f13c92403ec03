namespace FanOut.Benchmarks.Adaptive;

/// <summary>
/// A downstream with hidden capacity C: it serves C calls at once; beyond that calls queue (FIFO) and latency rises.
/// Service times are fixed, or lognormal around the median with sigma 0.6 (p99 = 4x the median), drawn from a seeded generator.
/// </summary>
public sealed class SimulatedDownstream(int capacity, TimeSpan serviceTime, bool logNormal = false, int seed = 1) : IDisposable
{
    /// <summary>ln(4) / 2.326 (the p99 z-score): p99 = 4x the median.</summary>
    public const double LogNormalSigma = 0.596;

    private readonly SemaphoreSlim _servers = new(capacity, capacity);
    private readonly Random _random = new(seed);
    private readonly Lock _randomLock = new();

    public int Capacity => capacity;

    public async ValueTask<int> CallAsync(int item, CancellationToken cancellationToken)
    {
        await _servers.WaitAsync(cancellationToken);
        try
        {
            await Task.Delay(NextServiceTime(), cancellationToken);
            return item;
        }
        finally
        {
            _servers.Release();
        }
    }

    public void Dispose() => _servers.Dispose();

    private TimeSpan NextServiceTime()
    {
        if (!logNormal)
        {
            return serviceTime;
        }

        double u1, u2;
        lock (_randomLock)
        {
            u1 = 1.0 - _random.NextDouble();
            u2 = _random.NextDouble();
        }

        var z = Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
        return serviceTime * Math.Exp(LogNormalSigma * z);
    }
}
