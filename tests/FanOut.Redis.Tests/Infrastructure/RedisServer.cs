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
    }

    /// <summary>A fresh connection that fails fast (no backlog) and reconnects on its own.</summary>
    public Task<ConnectionMultiplexer> Connect() => ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions
    {
        EndPoints = { Endpoint },
        AbortOnConnectFail = false,
        AsyncTimeout = 2000,
        SyncTimeout = 2000,
        ConnectRetry = 1,
        ReconnectRetryPolicy = new LinearRetry(100),
        BacklogPolicy = BacklogPolicy.FailFast,
    });

    /// <summary>Kills the server, waits <paramref name="down"/>, starts a fresh one on the same port (all data lost).</summary>
    public Task RestartAsync(TimeSpan down) => _server.RestartAsync(down);

    public async Task DisposeAsync()
    {
        await Connection.DisposeAsync();
        await _server.DisposeAsync();
    }
}
