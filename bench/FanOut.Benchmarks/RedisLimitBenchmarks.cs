using BenchmarkDotNet.Attributes;

using FanOut.Redis;
using FanOut.Redis.FleetWorker;

using StackExchange.Redis;

namespace FanOut.Benchmarks;

/// <summary>
/// Per-item overhead of <see cref="RedisConcurrencyLimit"/> against <c>ConcurrencyLimit.Fixed</c> of the same size, while the
/// budget is far from full (the local front's case): the permit protocol alone (take + give back, as the worker loop does
/// per item) and a whole FanOutAsync over synchronous bodies. Starts a private redis-server (needs redis-server installed).
/// </summary>
public class RedisLimitBenchmarks
{
    private const int Items = 100_000;
    private const int Budget = 64;
    private readonly int[] _items = Enumerable.Range(0, Items).ToArray();
    private LocalRedisServer _server = null!;
    private ConnectionMultiplexer _connection = null!;
    private RedisConcurrencyLimit _redis = null!;
    private ConcurrencyLimit _fixed = null!;
    private long _sink;

    [GlobalSetup]
    public async Task SetUp()
    {
        _server = await LocalRedisServer.StartAsync();
        _connection = await ConnectionMultiplexer.ConnectAsync(_server.Endpoint);
        _redis = RedisConcurrencyLimit.Create(_connection, new RedisLimitOptions { Key = "bench", Budget = Budget, Linger = TimeSpan.FromSeconds(1) });
        _fixed = ConcurrencyLimit.Fixed(Budget);

        // Lease a first batch, as any running fleet member holds one.
        if (!await _redis.WaitAsync(CancellationToken.None))
        {
            throw new InvalidOperationException("No lease.");
        }

        _redis.Release();
    }

    [GlobalCleanup]
    public async Task CleanUp()
    {
        await _redis.DisposeAsync();
        await _connection.DisposeAsync();
        await _server.DisposeAsync();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Items)]
    public Task Permit_Fixed() => TakeAndGiveBack(_fixed);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task Permit_Redis() => TakeAndGiveBack(_redis);

    [Benchmark(OperationsPerInvoke = Items)]
    public Task FanOutAsync_Fixed() => _items.FanOutAsync((i, _) => Body(i), new FanOutOptions { Limit = _fixed });

    [Benchmark(OperationsPerInvoke = Items)]
    public Task FanOutAsync_Redis() => _items.FanOutAsync((i, _) => Body(i), new FanOutOptions { Limit = _redis });

    private static async Task TakeAndGiveBack(ConcurrencyLimit limit)
    {
        for (var i = 0; i < Items; i++)
        {
            if (!limit.TryAcquire() && !await limit.WaitAsync(CancellationToken.None))
            {
                throw new InvalidOperationException("No permit.");
            }

            limit.Release();
        }
    }

    private ValueTask Body(int item)
    {
        Interlocked.Add(ref _sink, item);
        return ValueTask.CompletedTask;
    }
}
