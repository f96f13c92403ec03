using Npgsql;

namespace FanOut.Lab.ServerOverload;

/// <summary>
/// A real PostgreSQL behind an Npgsql pool of <c>poolSize</c> connections; each call runs one query that holds its
/// connection for <c>queryTime</c> (pg_sleep) after a little real work, so the database's connections are the bottleneck
/// (as a service's pool is) without the database's CPU fighting the load generator for the VM's 2 cores.
/// </summary>
public sealed class PostgresBackend : IOverloadBackend
{
    private readonly NpgsqlDataSource _source;
    private readonly int _poolSize;
    private readonly TimeSpan _queryTime;
    private readonly string _sql;

    public PostgresBackend(PostgresServer server, int poolSize, TimeSpan queryTime)
    {
        ArgumentNullException.ThrowIfNull(server);
        _poolSize = poolSize;
        _queryTime = queryTime;
        // Pool wait up to 30 s: the request's own abort (the client's timeout) ends a wait, not the pool.
        _source = NpgsqlDataSource.Create($"{server.ConnectionString};Maximum Pool Size={poolSize};Minimum Pool Size={poolSize};Timeout=30;No Reset On Close=true");
        _sql = FormattableString.Invariant($"SELECT count(*) FROM generate_series(1, 2000), pg_sleep({queryTime.TotalSeconds})");
    }

    /// <inheritdoc/>
    public string Describe => $"PostgreSQL (loopback), Npgsql pool of {_poolSize}, a query of {_queryTime.TotalMilliseconds:0} ms (pg_sleep + 2,000-row count)";

    /// <inheritdoc/>
    public double CapacityPerSecond => _poolSize / _queryTime.TotalSeconds;

    /// <summary>Opens the pool's connections once, so the first requests do not pay for connecting.</summary>
    public async Task WarmAsync()
    {
        var connections = new List<NpgsqlConnection>();
        for (var i = 0; i < _poolSize; i++)
        {
            connections.Add(await _source.OpenConnectionAsync().ConfigureAwait(false));
        }

        foreach (var connection in connections)
        {
            await connection.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <inheritdoc/>
    public async Task CallAsync(CancellationToken cancellationToken)
    {
        await using var connection = await _source.OpenConnectionAsync(cancellationToken).ConfigureAwait(false);
        await using var command = new NpgsqlCommand(_sql, connection);
        await command.ExecuteScalarAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    public ValueTask DisposeAsync() => _source.DisposeAsync();
}
