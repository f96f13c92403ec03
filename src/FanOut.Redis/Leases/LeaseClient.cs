using System.Net;

using StackExchange.Redis;

namespace FanOut.Redis.Leases;

/// <summary>
/// One limit's round trips to Redis, each bounded: a round trip not answered within <see cref="Timeout"/> throws
/// <see cref="TimeoutException"/>, whatever the connection's own timeouts and backlog would wait.
/// </summary>
/// <remarks>
/// <para>The connection may still be connecting (<see cref="RedisConcurrencyLimit.ConnectAsync"/> does not wait for it):
/// a round trip waits for it within the same bound.</para>
/// <para>A round trip given up on may still run in Redis later. Its task is observed (no unobserved exception), and the
/// acquire round hands the lease ids it asked for to the return loop, which releases them once Redis answers, so a late
/// grant does not sit on the budget until it expires.</para>
/// </remarks>
internal sealed class LeaseClient
{
    private static readonly Action<Task> s_observe = static task => _ = task.Exception;

    private readonly Task<IConnectionMultiplexer> _connection;
    private readonly RedisLimitOptions _options;
    private readonly TimeProvider _time;

    /// <summary>Serializes the scripts that change this client's leases, so a renewal never re-adds a lease released meanwhile.</summary>
    private readonly SemaphoreSlim _gate = new(1, 1);

    private LeaseStore? _store;
    private string _epoch = string.Empty;

    public LeaseClient(Task<IConnectionMultiplexer> connection, string endpoints, RedisLimitOptions options, string clientId)
    {
        _connection = connection;
        Endpoints = endpoints;
        _options = options;
        _time = options.TimeProvider;
        ClientId = clientId;
        Channel = LeaseStore.ChannelOf(options.Key);
        var lease = options.LeaseTime / 3;
        Timeout = options.RedisTimeout < lease ? options.RedisTimeout : lease;
    }

    /// <summary>This client's id: a prefix of each of its lease ids.</summary>
    public string ClientId { get; }

    /// <summary>Where releases and short acquisitions are published.</summary>
    public RedisChannel Channel { get; }

    /// <summary>The bound on one round trip: <see cref="RedisLimitOptions.RedisTimeout"/>, at most a third of the lease time.</summary>
    public TimeSpan Timeout { get; }

    /// <summary>Scripts run so far (round trips).</summary>
    public long RoundTrips => _store?.RoundTrips ?? 0;

    /// <summary>The epoch this client last saw (empty before its first script).</summary>
    public string Epoch
    {
        get => Volatile.Read(ref _epoch);
        set => Volatile.Write(ref _epoch, value);
    }

    /// <summary>The connection, once connected (null while it is still connecting or failed to).</summary>
    public IConnectionMultiplexer? ConnectionIfReady => _connection.IsCompletedSuccessfully ? _connection.Result : null;

    /// <summary>The Redis endpoints as configured, for messages: <c>127.0.0.1:6379</c>.</summary>
    public string Endpoints { get; }

    /// <summary>Formats <paramref name="endpoints"/> for <see cref="Endpoints"/>.</summary>
    public static string Describe(IEnumerable<EndPoint> endpoints)
    {
        var text = string.Join(", ", endpoints.Select(Describe));
        return text.Length == 0 ? "(no endpoint configured)" : text;
    }

    /// <summary>Runs one round trip under the gate, bounded by <see cref="Timeout"/>.</summary>
    /// <exception cref="TimeoutException">No answer within <see cref="Timeout"/> (the client's own <c>RedisTimeoutException</c> is one too).</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public Task<T> CallAsync<T>(Func<LeaseStore, Task<T>> call, CancellationToken cancellationToken) =>
        SerializedAsync((store, token) => Bounded(call(store), token), cancellationToken);

    /// <summary>
    /// Runs <paramref name="work"/> (round trips it bounds with <see cref="Bounded{T}(Task{T}, CancellationToken)"/>) under the
    /// gate; waiting for the gate and for the connection are bounded by <see cref="Timeout"/> as well.
    /// </summary>
    /// <remarks>
    /// The gate is released when the work gives up, not when Redis finally answers: a call that never ends (a backlog
    /// that waits for a connection forever) must not block every later one. A round trip given up on and one sent after
    /// it travel the same connection, so Redis still runs them in the order they were sent.
    /// </remarks>
    public async Task<T> SerializedAsync<T>(Func<LeaseStore, CancellationToken, Task<T>> work, CancellationToken cancellationToken)
    {
        if (!await _gate.WaitAsync(Timeout, cancellationToken).ConfigureAwait(false))
        {
            throw new TimeoutException($"Another round trip to Redis held the lease store for more than {Timeout.TotalMilliseconds:0} ms.");
        }

        try
        {
            var store = await Bounded(StoreAsync(), cancellationToken).ConfigureAwait(false);
            return await work(store, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _gate.Release();
        }
    }

    /// <summary>Waits for <paramref name="task"/> at most <see cref="Timeout"/>; a task given up on is still observed.</summary>
    public async Task<T> Bounded<T>(Task<T> task, CancellationToken cancellationToken)
    {
        try
        {
            return await task.WaitAsync(Timeout, _time, cancellationToken).ConfigureAwait(false);
        }
        catch when (!task.IsCompleted)
        {
            _ = task.ContinueWith(s_observe, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            throw;
        }
    }

    /// <inheritdoc cref="Bounded{T}(Task{T}, CancellationToken)"/>
    public async Task Bounded(Task task, CancellationToken cancellationToken)
    {
        try
        {
            await task.WaitAsync(Timeout, _time, cancellationToken).ConfigureAwait(false);
        }
        catch when (!task.IsCompleted)
        {
            _ = task.ContinueWith(s_observe, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            throw;
        }
    }

    /// <summary>The store, once the connection is up.</summary>
    public async Task<LeaseStore> StoreAsync()
    {
        if (Volatile.Read(ref _store) is { } store)
        {
            return store;
        }

        var connection = await _connection.ConfigureAwait(false);
        store = new LeaseStore(connection.GetDatabase(), _options, ClientId);
        return Interlocked.CompareExchange(ref _store, store, null) ?? store;
    }

    /// <summary>The connection (waits for it, unbounded: callers bound it).</summary>
    public Task<IConnectionMultiplexer> ConnectionAsync() => _connection;

    private static string Describe(EndPoint endpoint) => endpoint switch
    {
        DnsEndPoint dns => $"{dns.Host}:{dns.Port}",
        _ => endpoint.ToString() ?? "?",
    };
}
