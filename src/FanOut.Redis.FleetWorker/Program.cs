using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Text.Json;

using FanOut;
using FanOut.Redis;
using FanOut.Redis.Diagnostics;
using FanOut.Redis.FleetWorker;
using FanOut.Redis.FleetWorker.Soak;

using StackExchange.Redis;

const int UsageError = 2;
var arguments = WorkerArguments.Parse(args, out var error);
if (arguments is null)
{
    await Console.Error.WriteLineAsync($"fleet-worker: {error}");
    return UsageError;
}

var waitSeconds = 0.0;
var waitGate = new Lock();
using var listener = new MeterListener();
listener.InstrumentPublished = (instrument, l) =>
{
    if (instrument.Name == RedisLimitInstruments.WaitDuration)
    {
        l.EnableMeasurementEvents(instrument);
    }
};
listener.SetMeasurementEventCallback<double>((_, value, _, _) =>
{
    lock (waitGate)
    {
        waitSeconds += value;
    }
});
listener.Start();

// A configuration string: one endpoint, or the sentinels and serviceName= (the connection then follows the primary).
var configuration = ConfigurationOptions.Parse(arguments.Redis);
configuration.AbortOnConnectFail = false;
configuration.AsyncTimeout = 2000;
configuration.SyncTimeout = 2000;
configuration.BacklogPolicy = BacklogPolicy.FailFast;
configuration.ClientName ??= $"fleet-worker-{Environment.ProcessId}"; // the soak tells this worker's connections apart (CLIENT LIST)
await using var redis = arguments.Local ? null : await ConnectionMultiplexer.ConnectAsync(configuration);
if (arguments.Rate > 0 && redis is not null)
{
    return await FanOut.Redis.FleetWorker.Rates.RateWorker.RunAsync(redis, arguments);
}

RedisConcurrencyLimit? shared = redis is null ? null : RedisConcurrencyLimit.Create(redis, new RedisLimitOptions
{
    Key = arguments.Key,
    Budget = arguments.Adaptive ? 0 : arguments.Budget,
    Adaptive = arguments.Adaptive ? new AdaptiveBudgetOptions() : null,
    LeaseTime = TimeSpan.FromMilliseconds(arguments.LeaseMs),
    WhenUnavailable = arguments.Fallback > 0 ? RedisUnavailablePolicy.FallBackToLocal : RedisUnavailablePolicy.Fail,
    FallbackLimit = arguments.Fallback,
    ReplicaAcknowledgements = arguments.ReplicaAcks,
    ReplicaTimeout = TimeSpan.FromMilliseconds(500),
});
var limit = shared ?? ConcurrencyLimit.Fixed(arguments.Budget);
if (arguments.SoakPort > 0)
{
    using var rate = arguments.SoakRate > 0 && redis is not null
        ? RedisRateLimiter.Create(redis, new RedisRateLimiterOptions { Key = arguments.Key, PermitLimit = arguments.SoakRate, Burst = arguments.Burst })
        : null;
    var code = await SoakWorker.RunAsync(limit, arguments.SoakPort, Math.Max(1, arguments.HoldMs), rate);
    if (shared is not null)
    {
        await shared.DisposeAsync();
    }

    return code;
}

using var http = arguments.Url is { } url ? new HttpClient { BaseAddress = url, Timeout = TimeSpan.FromSeconds(10) } : null;
var probe = redis?.GetDatabase();
var running = (RedisKey)$"fleet-probe:{arguments.Key}:running";
var peak = (RedisKey)$"fleet-probe:{arguments.Key}:peak";
const string Enter = "local v = redis.call('INCR', KEYS[1]) if v > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], v) end return v";

if (arguments.WaitForGo)
{
    Console.WriteLine("ready");
    await Console.In.ReadLineAsync();
}

long ok = 0, status429 = 0, failed = 0;
string? runError = null;
var started = Stopwatch.GetTimestamp();
try
{
    await Enumerable.Range(0, arguments.Items).FanOutAsync(
        async (i, token) =>
        {
            if (http is not null)
            {
                try
                {
                    using var response = await http.GetAsync(new Uri($"item/{i}", UriKind.Relative), token);
                    if (arguments.Adaptive && (int)response.StatusCode == 429)
                    {
                        // The adaptive budget learns from the 429 and the run tries the item again.
                        Interlocked.Increment(ref status429);
                        throw new HttpRequestException("429 Too Many Requests", null, System.Net.HttpStatusCode.TooManyRequests);
                    }

                    _ = response.IsSuccessStatusCode ? Interlocked.Increment(ref ok)
                        : (int)response.StatusCode == 429 ? Interlocked.Increment(ref status429) : Interlocked.Increment(ref failed);
                }
                catch (HttpRequestException e) when (e.StatusCode == System.Net.HttpStatusCode.TooManyRequests)
                {
                    throw;
                }
                catch (Exception e) when (e is HttpRequestException or TaskCanceledException && !token.IsCancellationRequested)
                {
                    Interlocked.Increment(ref failed);
                }

                return;
            }

            if (probe is not null)
            {
                await probe.ScriptEvaluateAsync(Enter, [running, peak]);
            }

            try
            {
                await Task.Delay(arguments.HoldMs, token);
            }
            finally
            {
                if (probe is not null)
                {
                    await probe.StringDecrementAsync(running);
                }
            }

            Interlocked.Increment(ref ok);
        },
        arguments.Adaptive ? new FanOutOptions { Limit = limit, OverloadRetries = 100 } : new FanOutOptions { Limit = limit });
}
catch (Exception e)
{
    runError = $"{e.GetType().Name}: {e.Message}" + (e.InnerException is { } inner ? $" -> {inner.GetType().Name}: {inner.Message}" : string.Empty);
}

var elapsed = Stopwatch.GetElapsedTime(started);
var roundTrips = shared?.RoundTrips ?? 0;
if (shared is not null)
{
    await shared.DisposeAsync();
}

var report = new WorkerReport
{
    Ok = ok,
    Status429 = status429,
    Failed = failed,
    ElapsedMs = elapsed.TotalMilliseconds,
    PermitWaitMs = WaitMs(),
    RoundTrips = roundTrips,
    Error = runError,
};
Console.WriteLine("report " + JsonSerializer.Serialize(report, WorkerJsonContext.Default.WorkerReport));
return runError is null ? 0 : 1;

double WaitMs()
{
    lock (waitGate)
    {
        return waitSeconds * 1000;
    }
}
