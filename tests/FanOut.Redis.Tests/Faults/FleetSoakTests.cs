using System.Globalization;

using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

using Xunit.Abstractions;

namespace FanOut.Redis.Tests.Faults;

/// <summary>
/// Random Redis faults for a while (<c>FANOUT_REDIS_SOAK_SECONDS</c>; skipped when unset): two limits on one key, each
/// on its own connection, keep running FanOutAsync with <see cref="RedisUnavailablePolicy.Fail"/> while pauses (some
/// longer than a lease), restarts and out-of-memory spells come and go. A run that fails is run again with the items it
/// did not start. Violations: items running at once above the budget, an item started twice, an item never run.
/// </summary>
public sealed class FleetSoakTests(RedisServer redis, ITestOutputHelper output) : IClassFixture<RedisServer>
{
    private const string SecondsVariable = "FANOUT_REDIS_SOAK_SECONDS";
    private const int Budget = 4;
    private const int Batch = 200;

    [SoakFact]
    public async Task Soak_RandomFaults_NoViolations()
    {
        var seconds = int.Parse(Environment.GetEnvironmentVariable(SecondsVariable)!, CultureInfo.InvariantCulture);
        var options = new RedisLimitOptions
        {
            Key = $"soak-{Guid.NewGuid():N}",
            Budget = Budget,
            BatchSize = 2,
            LeaseTime = TimeSpan.FromSeconds(1),
            PollInterval = TimeSpan.FromMilliseconds(50),
        };
        await using var first = await redis.Connect(BacklogPolicy.FailFast, timeoutMs: 300);
        await using var second = await redis.Connect(BacklogPolicy.Default, timeoutMs: 300);
        await using var a = RedisConcurrencyLimit.Create(first, options);
        await using var b = RedisConcurrencyLimit.Create(second, options);
        var state = new SoakState();
        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));

        var workers = new[] { WorkAsync(a, state, 0, stop.Token), WorkAsync(b, state, 1, stop.Token) };
        var faults = await InjectAsync(stop.Token);
        var issued = await Task.WhenAll(workers);

        var neverRun = issued.Sum(n => n) - state.Started;
        output.WriteLine($"{seconds} s: faults {string.Join(", ", faults.Select(f => $"{f.Key} {f.Value}"))}; items {state.Started:N0}; " +
            $"failed runs {state.FailedRuns}; peak {state.Peak} of {Budget}; violations: above budget {state.AboveBudget}, twice {state.Twice}, never run {neverRun}");
        Assert.Equal(0, state.AboveBudget);
        Assert.Equal(0, state.Twice);
        Assert.Equal(0, neverRun);
    }

    /// <summary>Runs batches on <paramref name="limit"/> until stopped; a failed run's unstarted items go into the next run.</summary>
    /// <returns>Items issued (each once, under a unique number).</returns>
    private static async Task<long> WorkAsync(RedisConcurrencyLimit limit, SoakState state, int worker, CancellationToken stop)
    {
        var next = 0L;
        var pending = new List<long>();
        while (!stop.IsCancellationRequested || pending.Count > 0)
        {
            while (!stop.IsCancellationRequested && pending.Count < Batch)
            {
                pending.Add((next++ * 2) + worker);
            }

            try
            {
                await pending.FanOutAsync(state.BodyAsync, new FanOutOptions { Limit = limit });
                pending.Clear();
            }
            catch (Exception e) when (IsUnavailable(e))
            {
                Interlocked.Increment(ref state.FailedRuns);
                pending.RemoveAll(state.HasStarted);
                await Task.Delay(50, CancellationToken.None);
            }
        }

        return next;
    }

    private async Task<Dictionary<string, int>> InjectAsync(CancellationToken stop)
    {
        var counts = new Dictionary<string, int> { ["pause"] = 0, ["long pause"] = 0, ["restart"] = 0, ["oom"] = 0 };
        await using var admin = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { redis.Endpoint }, AllowAdmin = true, AbortOnConnectFail = false });
        var random = new Random(17);
        while (!stop.IsCancellationRequested)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(random.Next(500, 2000)), CancellationToken.None);
            if (stop.IsCancellationRequested)
            {
                break;
            }

            try
            {
                switch (random.Next(4))
                {
                    case 0:
                        counts["pause"]++;
                        await PauseAsync(admin, TimeSpan.FromMilliseconds(random.Next(300, 900)));
                        break;
                    case 1:
                        counts["long pause"]++;
                        await PauseAsync(admin, TimeSpan.FromMilliseconds(random.Next(1200, 2500)));
                        break;
                    case 2:
                        counts["restart"]++;
                        await redis.RestartAsync(TimeSpan.FromMilliseconds(random.Next(100, 500)));
                        break;
                    default:
                        counts["oom"]++;
                        var server = admin.GetServer(redis.Endpoint);
                        await server.ConfigSetAsync("maxmemory-policy", "noeviction");
                        await server.ConfigSetAsync("maxmemory", "1");
                        await Task.Delay(random.Next(300, 1500), CancellationToken.None);
                        await server.ConfigSetAsync("maxmemory", "0");
                        break;
                }
            }
            catch (RedisException)
            {
                // The admin connection was reconnecting after a restart: this fault is skipped.
            }
        }

        return counts;
    }

    private async Task PauseAsync(IConnectionMultiplexer admin, TimeSpan pause)
    {
        await admin.GetServer(redis.Endpoint).ExecuteAsync("CLIENT", "PAUSE", ((long)pause.TotalMilliseconds).ToString(CultureInfo.InvariantCulture), "ALL");
        await Task.Delay(pause, CancellationToken.None);
    }

    private static bool IsUnavailable(Exception failure) => failure switch
    {
        RedisLimitUnavailableException => true,
        AggregateException aggregate => aggregate.InnerExceptions.All(IsUnavailable),
        _ => false,
    };

    private sealed class SoakState
    {
        private readonly System.Collections.Concurrent.ConcurrentDictionary<long, int> _starts = new();
        private int _running;
        private int _peak;
        public int FailedRuns;
        public int AboveBudget;
        public int Twice;

        public long Started => _starts.Count;

        public int Peak => Volatile.Read(ref _peak);

        public bool HasStarted(long item) => _starts.ContainsKey(item);

        public async ValueTask BodyAsync(long item, CancellationToken cancellationToken)
        {
            if (_starts.AddOrUpdate(item, 1, (_, n) => n + 1) > 1)
            {
                Interlocked.Increment(ref Twice);
            }

            var now = Interlocked.Increment(ref _running);
            if (now > Budget)
            {
                Interlocked.Increment(ref AboveBudget);
            }

            var seen = Volatile.Read(ref _peak);
            while (now > seen && Interlocked.CompareExchange(ref _peak, now, seen) != seen)
            {
                seen = Volatile.Read(ref _peak);
            }

            await Task.Delay(10, CancellationToken.None);
            Interlocked.Decrement(ref _running);
        }
    }

    /// <summary>Runs only when <c>FANOUT_REDIS_SOAK_SECONDS</c> is set: a soak is a measurement, not part of the test run.</summary>
    private sealed class SoakFactAttribute : FactAttribute
    {
        public SoakFactAttribute()
        {
            if (!int.TryParse(Environment.GetEnvironmentVariable(SecondsVariable), NumberStyles.Integer, CultureInfo.InvariantCulture, out var seconds) || seconds <= 0)
            {
                Skip = $"set {SecondsVariable} to soak for that many seconds";
            }
        }
    }
}
