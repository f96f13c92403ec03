using System.Diagnostics;
using System.Security.Cryptography;

namespace FanOut.Lab.ServerOverload;

/// <summary>
/// The service's own CPU as the bottleneck: each call hashes (SHA-256) on the request's thread for about
/// <c>workTime</c>, so the cores serve <c>cores / workTime</c> calls per second and nothing queues but the thread pool.
/// </summary>
public sealed class CpuBackend : IOverloadBackend
{
    private readonly TimeSpan _workTime;
    private readonly int _rounds;
    private readonly byte[] _block = new byte[4096];

    /// <summary>Calibrates the number of hashing rounds that take <paramref name="workTime"/> on one idle core.</summary>
    public CpuBackend(TimeSpan workTime)
    {
        _workTime = workTime;
        var clock = Stopwatch.StartNew();
        var rounds = 0;
        while (clock.Elapsed < TimeSpan.FromMilliseconds(200))
        {
            Hash(64);
            rounds += 64;
        }

        _rounds = Math.Max(1, (int)(rounds * workTime.TotalMilliseconds / clock.Elapsed.TotalMilliseconds));
    }

    /// <inheritdoc/>
    public string Describe => $"the service's own CPU: SHA-256 for {_workTime.TotalMilliseconds:0} ms per request on {Environment.ProcessorCount} cores";

    /// <inheritdoc/>
    public double CapacityPerSecond => Environment.ProcessorCount / _workTime.TotalSeconds;

    /// <inheritdoc/>
    public Task CallAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        Hash(_rounds);
        return Task.CompletedTask;
    }

    /// <inheritdoc/>
    public ValueTask DisposeAsync() => ValueTask.CompletedTask;

    private void Hash(int rounds)
    {
        Span<byte> digest = stackalloc byte[32];
        for (var i = 0; i < rounds; i++)
        {
            SHA256.HashData(_block, digest);
        }
    }
}
