using System.Globalization;
using System.Threading.RateLimiting;

using FanOut.Redis.Leases;
using FanOut.Redis.Rates;

using StackExchange.Redis;

namespace FanOut.Redis;

/// <summary>
/// A fleet-wide rate limit: every process that creates one with the same <see cref="RedisRateLimiterOptions.Key"/> shares
/// <see cref="RedisRateLimiterOptions.PermitLimit"/> permits per <see cref="RedisRateLimiterOptions.Window"/>, scored by the
/// Redis server's clock in one Lua script per acquisition (GCRA: a token bucket refilled continuously).
/// </summary>
/// <remarks>
/// <para><see cref="RateLimiter.AttemptAcquire"/> never blocks on the network: the fleet's state is in Redis, so it grants
/// nothing and says to acquire asynchronously (a failed lease with a zero <see cref="MetadataName.RetryAfter"/>); FanOut's
/// worker loop and ASP.NET Core's rate limiting middleware then call <see cref="RateLimiter.AcquireAsync"/>, which asks Redis
/// and, when the fleet is ahead of its rate, the script reserves the next free slot (within
/// <see cref="RedisRateLimiterOptions.ReservationHorizon"/>) and the caller waits until it, so the waiters of every process
/// queue in time rather than racing for each slot.</para>
/// <para>Every round trip is bounded by <see cref="RedisRateLimiterOptions.RedisTimeout"/>; one that fails or is not answered
/// in time throws <see cref="RedisLimitUnavailableException"/> (never silently unbounded), or, under
/// <see cref="RedisUnavailablePolicy.FallBackToLocal"/>, takes the permits from a local rate: this process's share of the
/// fleet rate when Redis last answered (<see cref="RedisRateLimiterOptions.FallbackAtLastShare"/>), at most
/// <see cref="RedisRateLimiterOptions.FallbackPermitLimit"/>. While it falls back, Redis is asked again at most every
/// 250 ms; the first answer ends the fallback.</para>
/// </remarks>
public sealed class RedisRateLimiter : RateLimiter
{
    private static readonly RateLimitLease s_granted = new RateLease(true, null);
    private static readonly RateLimitLease s_tryAsync = new RateLease(false, TimeSpan.Zero);
    private static readonly RateLimitLease s_failed = new RateLease(false, null);

    /// <summary>While the fallback serves, how often an acquisition asks Redis again.</summary>
    private static readonly TimeSpan s_retryInterval = TimeSpan.FromMilliseconds(250);

    private readonly IDatabase _database;
    private readonly RedisRateLimiterOptions _options;
    private readonly string _endpoints;
    private readonly RedisKey[] _keys;
    private readonly RedisValue _interval;
    private readonly RedisValue _burst;
    private readonly RedisValue _horizon;
    private readonly RedisValue _clientId = $"{Environment.ProcessId}-{Guid.NewGuid():N}";
    private readonly RedisValue _presenceMs;
    private readonly LocalRate _local;
    private readonly TimeProvider _time;

    /// <summary>The processes using the rate when Redis last answered (0 before its first answer).</summary>
    private int _lastProcesses;

    /// <summary>When <see cref="_lastProcesses"/> was last raised or renewed (a timestamp of the options' clock).</summary>
    private long _processesSeenAt;

    /// <summary>Under the fallback: when Redis is asked again (a timestamp of the options' clock); 0 while it answers.</summary>
    private long _retryAt;
    private long _successful;
    private long _failed;
    private int _queued;
    private int _disposed;

    /// <summary>Canceled by <see cref="Dispose(bool)"/>: ends every wait of this limiter's callers with a failed lease.</summary>
    private readonly CancellationTokenSource _disposing = new();

    private RedisRateLimiter(IConnectionMultiplexer redis, RedisRateLimiterOptions options)
    {
        _database = redis.GetDatabase();
        _options = options;
        _endpoints = LeaseClient.Describe(redis.GetEndPoints(configuredOnly: true));
        _keys = [$"fanout:{{{options.Key}}}:rate", $"fanout:{{{options.Key}}}:raters"];
        _time = options.TimeProvider;
        _local = new LocalRate(options.TimeProvider);

        // A process counts among those sharing the rate for a while after its last acquisition: a window, at least 5 s.
        _presenceMs = (long)Math.Max(options.Window.TotalMilliseconds, 5000);
        var interval = options.Window.TotalMicroseconds / options.PermitLimit;
        _interval = interval.ToString("R", CultureInfo.InvariantCulture);
        _burst = (interval * options.EffectiveBurst).ToString("R", CultureInfo.InvariantCulture);
        _horizon = (long)options.ReservationHorizon.TotalMicroseconds;
    }

    /// <summary>A limiter sharing <paramref name="options"/>' rate through <paramref name="redis"/>, which the caller keeps and disposes.</summary>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    public static RedisRateLimiter Create(IConnectionMultiplexer redis, RedisRateLimiterOptions options)
    {
        ArgumentNullException.ThrowIfNull(redis);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return new RedisRateLimiter(redis, options);
    }

    /// <summary>
    /// A partitioned limiter (ASP.NET Core's <c>RateLimiterOptions.GlobalLimiter</c>): one fleet-wide rate per partition,
    /// each <paramref name="options"/>' rate under the key <c>{Key}:{partition}</c>.
    /// </summary>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    public static PartitionedRateLimiter<TResource> CreatePartitioned<TResource>(IConnectionMultiplexer redis, Func<TResource, string> partition, RedisRateLimiterOptions options)
    {
        ArgumentNullException.ThrowIfNull(redis);
        ArgumentNullException.ThrowIfNull(partition);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return PartitionedRateLimiter.Create<TResource, string>(resource =>
        {
            var name = partition(resource);
            return RateLimitPartition.Get(name, key => new RedisRateLimiter(redis, options with { Key = $"{options.Key}:{key}" }));
        });
    }

    /// <summary>The options this limiter was created with.</summary>
    public RedisRateLimiterOptions Options => _options;

    /// <summary>
    /// Permits per <see cref="RedisRateLimiterOptions.Window"/> this process takes while Redis is unreachable (under
    /// <see cref="RedisUnavailablePolicy.FallBackToLocal"/>): its share of the fleet rate when Redis last answered, at most
    /// <see cref="RedisRateLimiterOptions.FallbackPermitLimit"/>; that ceiling alone before Redis first answered or with
    /// <see cref="RedisRateLimiterOptions.FallbackAtLastShare"/> off.
    /// </summary>
    public int FallbackPermitLimit
    {
        get
        {
            var processes = Volatile.Read(ref _lastProcesses);
            return _options.FallbackAtLastShare && processes > 0
                ? Math.Min(_options.FallbackPermitLimit, (_options.PermitLimit + processes - 1) / processes)
                : _options.FallbackPermitLimit;
        }
    }

    /// <summary>Always null: whether the fleet's bucket is full is known only to Redis.</summary>
    public override TimeSpan? IdleDuration => null;

    /// <inheritdoc/>
    /// <exception cref="ObjectDisposedException">The limiter is disposed.</exception>
    public override RateLimiterStatistics? GetStatistics()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        return new()
        {
            CurrentAvailablePermits = 0,
            CurrentQueuedCount = Volatile.Read(ref _queued),
            TotalFailedLeases = Interlocked.Read(ref _failed),
            TotalSuccessfulLeases = Interlocked.Read(ref _successful),
        };
    }

    /// <summary>
    /// Grants nothing without a round trip: a failed lease saying to acquire asynchronously (a zero RetryAfter); zero permits
    /// always succeed. Both are counted in the statistics, as the runtime's limiters count their answers.
    /// </summary>
    /// <param name="permitCount">Permits wanted: 0 to the burst.</param>
    protected override RateLimitLease AttemptAcquireCore(int permitCount)
    {
        CheckPermitCount(permitCount);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (permitCount == 0)
        {
            Interlocked.Increment(ref _successful);
            return s_granted;
        }

        Interlocked.Increment(ref _failed);
        return s_tryAsync;
    }

    /// <summary>Asks Redis for <paramref name="permitCount"/> permits, waiting as long as the script says until they are granted.</summary>
    /// <param name="permitCount">Permits wanted: 0 to the burst.</param>
    /// <param name="cancellationToken">Ends the wait (an <see cref="OperationCanceledException"/>).</param>
    /// <returns>A granted lease, or a failed one when the limiter is disposed while the caller waits.</returns>
    /// <exception cref="RedisLimitUnavailableException">A round trip failed or was not answered within <see cref="RedisRateLimiterOptions.RedisTimeout"/>.</exception>
    protected override async ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken)
    {
        CheckPermitCount(permitCount);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        cancellationToken.ThrowIfCancellationRequested();
        if (permitCount == 0)
        {
            Interlocked.Increment(ref _successful);
            return s_granted;
        }

        Interlocked.Increment(ref _queued);
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _disposing.Token);
        try
        {
            return await AcquireWhileNotDisposedAsync(permitCount, wait.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested && _disposing.IsCancellationRequested)
        {
            // Disposed while waiting: a failed lease, as the runtime's limiters fail their queues.
            Interlocked.Increment(ref _failed);
            return s_failed;
        }
        finally
        {
            Interlocked.Decrement(ref _queued);
        }
    }

    /// <summary>Asks Redis (or the fallback) until the permits are granted; <paramref name="cancellationToken"/> is the caller's and the disposal's.</summary>
    private async ValueTask<RateLimitLease> AcquireWhileNotDisposedAsync(int permitCount, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                if (_options.WhenUnavailable == RedisUnavailablePolicy.FallBackToLocal)
                {
                    var retryAt = Interlocked.Read(ref _retryAt);
                    if (retryAt != 0 && _time.GetTimestamp() < retryAt)
                    {
                        // Redis known unreachable: the local rate serves until the next try is due.
                        return await FallbackAsync(permitCount, cancellationToken).ConfigureAwait(false);
                    }
                }

                bool reserved;
                TimeSpan wait;
                try
                {
                    (reserved, wait) = await AskAsync(permitCount, cancellationToken).ConfigureAwait(false);
                    Interlocked.Exchange(ref _retryAt, 0);
                }
                catch (RedisLimitUnavailableException) when (_options.WhenUnavailable == RedisUnavailablePolicy.FallBackToLocal)
                {
                    Interlocked.Exchange(ref _retryAt, _time.GetTimestamp() + (long)(s_retryInterval.TotalSeconds * _time.TimestampFrequency));
                    return await FallbackAsync(permitCount, cancellationToken).ConfigureAwait(false);
                }

                if (wait > TimeSpan.Zero)
                {
                    // Reserved: the permits are ours at server-now + wait (canceled meanwhile, they are spent). Refused: ask again then.
                    await RateWait.AtLeastAsync(wait, _time, cancellationToken).ConfigureAwait(false);
                }

                if (reserved)
                {
                    Interlocked.Increment(ref _successful);
                    return s_granted;
                }
            }
        }
        catch (RedisLimitUnavailableException)
        {
            Interlocked.Increment(ref _failed);
            throw;
        }
    }

    /// <summary>Takes <paramref name="permitCount"/> from the local rate at <see cref="FallbackPermitLimit"/>, waiting for its slot.</summary>
    private async ValueTask<RateLimitLease> FallbackAsync(int permitCount, CancellationToken cancellationToken)
    {
        var perWindow = FallbackPermitLimit;
        var burst = Math.Max(1, (int)Math.Ceiling((double)_options.EffectiveBurst * perWindow / _options.PermitLimit));
        var wait = _local.Reserve(permitCount, perWindow, burst, _options.Window);
        if (wait > TimeSpan.Zero)
        {
            await RateWait.AtLeastAsync(wait, _time, cancellationToken).ConfigureAwait(false);
        }

        Interlocked.Increment(ref _successful);
        return s_granted;
    }

    /// <summary>Ends every wait of this limiter's callers with a failed lease; later calls throw <see cref="ObjectDisposedException"/>.</summary>
    /// <remarks>Runs for <see cref="RateLimiter.Dispose()"/> and <see cref="RateLimiter.DisposeAsync"/> alike. A slot Redis reserved for a waiter is spent, as a canceled wait's is.</remarks>
    protected override void Dispose(bool disposing)
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _disposing.Cancel();
        }

        base.Dispose(disposing);
    }

    /// <summary>One round trip: reserved (the permits are this caller's after <c>Wait</c>) or not (ask again after <c>Wait</c>).</summary>
    private async Task<(bool Reserved, TimeSpan Wait)> AskAsync(int permitCount, CancellationToken cancellationToken)
    {
        var call = _database.ScriptEvaluateAsync(RateScripts.Acquire, _keys, [_interval, _burst, permitCount, _horizon, _clientId, _presenceMs]);
        RedisResult[] reply;
        try
        {
            reply = (RedisResult[])(await call.WaitAsync(_options.RedisTimeout, _options.TimeProvider, cancellationToken).ConfigureAwait(false))!;
        }
        catch (Exception e) when (e is RedisException or TimeoutException or ObjectDisposedException)
        {
            _ = call.ContinueWith(static t => _ = t.Exception, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            throw RedisLimitUnavailableException.Create(_options.Key, _endpoints, _options.RedisTimeout, e);
        }

        RememberProcesses((int)reply[2]);
        return ((long)reply[0] == 1, TimeSpan.FromMicroseconds((long)reply[1]));
    }

    /// <summary>
    /// Keeps the largest count of processes using the rate seen within a presence time: after a restart the set of
    /// processes starts empty and the first answers say 1, 2, ..., which would give a process that falls back right
    /// then the whole rate as its share.
    /// </summary>
    private void RememberProcesses(int processes)
    {
        var now = _time.GetTimestamp();
        var presence = (long)((long)_presenceMs / 1000.0 * _time.TimestampFrequency);
        if (processes >= Volatile.Read(ref _lastProcesses) || now - Interlocked.Read(ref _processesSeenAt) > presence)
        {
            Volatile.Write(ref _lastProcesses, processes);
            Interlocked.Exchange(ref _processesSeenAt, now);
        }
    }

    private void CheckPermitCount(int permitCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(permitCount);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(permitCount, _options.EffectiveBurst);
    }

    /// <summary>A lease of this limiter: granted, or failed with a retry-after.</summary>
    private sealed class RateLease(bool acquired, TimeSpan? retryAfter) : RateLimitLease
    {
        public override bool IsAcquired => acquired;

        public override IEnumerable<string> MetadataNames => retryAfter is null ? [] : [MetadataName.RetryAfter.Name];

        public override bool TryGetMetadata(string metadataName, out object? metadata)
        {
            if (retryAfter is { } after && metadataName == MetadataName.RetryAfter.Name)
            {
                metadata = after;
                return true;
            }

            metadata = null;
            return false;
        }
    }
}
