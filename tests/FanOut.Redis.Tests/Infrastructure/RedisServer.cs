using FanOut.Redis.FleetWorker;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>A test class's private redis-server (<see cref="LocalRedisServer"/>) and a shared connection to it.</summary>
public sealed class RedisServer : IAsyncLifetime
{
    private LocalRedisServer _server = null!;

    /// <summary>The StackExchange.Redis configuration string.</summary>
    public string Endpoint => _server.Endpoint;

    /// <summary>A client connection to it, shared by the tests of a class.</summary>
    public ConnectionMultiplexer Connection { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        _server = await LocalRedisServer.StartAsync();
        Connection = await Connect();
        await WarmUpAsync(Connection);
    }

    /// <summary>
    /// Takes and returns one permit, so a test's first round trip is not the one that loads the lease scripts into this
    /// server and JIT-compiles the lease path: on a loaded CI host that cold trip has taken longer than a third of a 2 s
    /// lease (the bound a test with a short lease sets) and failed a test about something else.
    /// </summary>
    /// <remarks>
    /// A 1 s lease: a key's first client on a server younger than one lease time waits out the restart grace (the rest of
    /// that lease time; docs/redis-limit.md), so a long lease here would cost the class that long. A round trip is then
    /// bounded by a third of a second, so an unanswered cold trip is simply tried again.
    /// </remarks>
    private static async Task WarmUpAsync(ConnectionMultiplexer connection)
    {
        await using var limit = RedisConcurrencyLimit.Create(connection, new RedisLimitOptions
        {
            Key = $"warm-up-{Guid.NewGuid():N}",
            Budget = 1,
            LeaseTime = TimeSpan.FromSeconds(1),
        });
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (true)
        {
            try
            {
                if (await limit.WaitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(30)))
                {
                    limit.Release();
                    return;
                }
            }
            catch (RedisLimitUnavailableException) when (DateTime.UtcNow < deadline)
            {
                // A cold round trip missed its bound: the next one finds the scripts loaded.
            }
        }
    }

    /// <summary>
    /// A new key whose epoch already exists, so its first client waits out no restart grace: on a server younger than one
    /// lease time a new key's first client cannot tell a restart from a first start and waits out the rest of that lease
    /// time (docs/redis-limit.md), which a test of something else should not pay (a 15 s lease cost a class 14 s).
    /// </summary>
    /// <remarks>Not for the tests of the grace itself, or of a restart: those must see the key as Redis has it.</remarks>
    public async Task<string> FreshKeyAsync(string prefix)
    {
        var key = $"{prefix}-{Guid.NewGuid():N}";
        await KeyEpoch.SetAsync(Connection.GetDatabase(), key);
        return key;
    }

    /// <summary>A fresh connection that fails fast (no backlog) and reconnects on its own.</summary>
    public Task<ConnectionMultiplexer> Connect() => Connect(BacklogPolicy.FailFast);

    /// <summary>A fresh connection with <paramref name="backlog"/>, commands timing out after <paramref name="timeoutMs"/>.</summary>
    public Task<ConnectionMultiplexer> Connect(BacklogPolicy backlog, int timeoutMs = 2000) => ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions
    {
        EndPoints = { Endpoint },
        AbortOnConnectFail = false,
        AsyncTimeout = timeoutMs,
        SyncTimeout = timeoutMs,
        ConnectRetry = 1,
        ReconnectRetryPolicy = new LinearRetry(100),
        BacklogPolicy = backlog,
    });

    /// <summary>Pauses every client of the server for <paramref name="pause"/> (<c>CLIENT PAUSE ms ALL</c>), sent from a connection of its own.</summary>
    /// <remarks>Commands sent meanwhile are not answered until the pause ends, then run: an unanswered command, as a slow Redis gives.</remarks>
    public async Task PauseAsync(TimeSpan pause)
    {
        await using var admin = await ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions { EndPoints = { Endpoint }, AllowAdmin = true });
        await admin.GetServer(Endpoint).ExecuteAsync("CLIENT", "PAUSE", ((long)pause.TotalMilliseconds).ToString(System.Globalization.CultureInfo.InvariantCulture), "ALL");
    }

    /// <summary>Kills the server (no reply, connections refused) until <see cref="StartAgainAsync"/>.</summary>
    public void Kill() => _server.Kill();

    /// <summary>Starts a fresh server on the same port (data lost).</summary>
    public Task StartAgainAsync() => _server.StartAgainAsync();

    /// <summary>Kills the server, waits <paramref name="down"/>, starts a fresh one on the same port (all data lost).</summary>
    public Task RestartAsync(TimeSpan down) => _server.RestartAsync(down);

    public async Task DisposeAsync()
    {
        await Connection.DisposeAsync();
        await _server.DisposeAsync();
    }
}
