using System.Threading.RateLimiting;

using BenchmarkDotNet.Attributes;

namespace FanOut.Benchmarks;

/// <summary>
/// The RateLimiter bridge's cost per permit, uncontended: <c>limit.AsRateLimiter()</c>'s AttemptAcquire + Dispose (a lease
/// object, and the limit told the outcome), against the limit's own TryAcquire/Release and against the BCL's
/// <see cref="ConcurrencyLimiter"/>'s AttemptAcquire + Dispose.
/// </summary>
[Config(typeof(ShortConfig))]
public class RateLimiterBridgeBenchmarks
{
    private ConcurrencyLimit _fixed = null!;
    private ConcurrencyLimit _adaptive = null!;
    private RateLimiter _fixedBridge = null!;
    private RateLimiter _adaptiveBridge = null!;
    private ConcurrencyLimiter _bcl = null!;

    [GlobalSetup]
    public void Setup()
    {
        _fixed = ConcurrencyLimit.Fixed(64);
        _adaptive = ConcurrencyLimit.Adaptive();
        _fixedBridge = _fixed.AsRateLimiter();
        _adaptiveBridge = _adaptive.AsRateLimiter();
        _bcl = new ConcurrencyLimiter(new ConcurrencyLimiterOptions { PermitLimit = 64, QueueLimit = 0 });
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _fixedBridge.Dispose();
        _adaptiveBridge.Dispose();
        _bcl.Dispose();
    }

    [Benchmark(Baseline = true, Description = "Fixed(64).TryAcquire + Release")]
    public void LimitTryAcquireRelease()
    {
        if (_fixed.TryAcquire())
        {
            _fixed.Release();
        }
    }

    [Benchmark(Description = "Fixed(64).AsRateLimiter() AttemptAcquire + Dispose")]
    public void BridgeFixed() => _fixedBridge.AttemptAcquire().Dispose();

    [Benchmark(Description = "Adaptive().AsRateLimiter() AttemptAcquire + Dispose (outcome reported)")]
    public void BridgeAdaptive() => _adaptiveBridge.AttemptAcquire().Dispose();

    [Benchmark(Description = "Fixed(64).AsRateLimiter() AcquireAsync + Dispose")]
    public async Task BridgeFixedAsync() => (await _fixedBridge.AcquireAsync()).Dispose();

    [Benchmark(Description = "ConcurrencyLimiter(64) AttemptAcquire + Dispose")]
    public void ConcurrencyLimiterAttempt() => _bcl.AttemptAcquire().Dispose();
}
