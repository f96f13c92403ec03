using System.Diagnostics;
using System.Globalization;
using System.Text.Json;

using FanOut.Downstream;
using FanOut.Lab.Measurement;

using Microsoft.Data.Sqlite;

namespace FanOut.Lab.Workloads.RealIo;

/// <summary><c>price-sync</c>, seed 000's example: product ids come from a SQLite database; per item, <c>GET /price/{id}</c> and write the price back with an UPDATE.</summary>
/// <remarks>
/// <para>The database lives in a <see cref="LabTempFolder"/> made in <see cref="SetUpAsync"/> and deleted in
/// <see cref="DisposeAsync"/>. Each item opens its own (pooled) connection, as a per-request repository would.</para>
/// <para>SQLite has one writer at a time: concurrent UPDATEs wait for the write lock, inside the call, on the calling
/// thread (Microsoft.Data.Sqlite's async methods run synchronously and retry SQLITE_BUSY until the command timeout).
/// That wait is the write contention seed 002 warns of; <see cref="IoRunMetrics.WriteWaitMs"/> sums it over the items.</para>
/// </remarks>
public sealed class PriceSyncWorkload : Workload, ICaseLifecycle, ILiveCounters
{
    private readonly DownstreamOptions _options;
    private readonly TimeSpan _callTimeout;
    private readonly int _itemCount;
    private DownstreamConnection? _downstream;
    private ItemOutcomes? _outcomes;
    private LabTempFolder? _folder;
    private string _connectionString = string.Empty;
    private long[] _ids = [];
    private Uri[] _paths = [];
    private long _writeTicks;

    /// <summary>Creates the workload for <paramref name="itemCount"/> products; nothing is created until <see cref="SetUpAsync"/>.</summary>
    public PriceSyncWorkload(DownstreamOptions options, TimeSpan callTimeout, int itemCount)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(callTimeout, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        _options = options;
        _callTimeout = callTimeout;
        _itemCount = itemCount;
    }

    /// <inheritdoc/>
    public override string Name => $"GET /price + SQLite UPDATE ({_options.Latency})";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters
    {
        get
        {
            var parameters = new Dictionary<string, object>();
            DownstreamConnection.Describe(_options, _callTimeout, parameters);
            parameters["database"] = "sqlite wal";
            return parameters;
        }
    }

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override WorkProfile Profile => new([], UsesCpu: false);

    /// <inheritdoc/>
    /// <remarks>Waves of one GET (the server's mean latency) and one UPDATE that waits for nobody
    /// (<see cref="LoneWriteMs"/>), as many items a wave as run at once and the server serves; but never faster than SQLite's
    /// one writer commits them when many queue (<see cref="QueuedWriteMs"/> each).</remarks>
    public override double EstimateRunMs(double idealMs, int concurrency)
    {
        var perWave = DownstreamConnection.CallsPerWave(_options, concurrency);
        var wavesMs = Math.Ceiling(_itemCount / (double)perWave) * (_options.Latency.MeanMilliseconds + LoneWriteMs);
        return Math.Max(idealMs, Math.Max(wavesMs, _itemCount * QueuedWriteMs));
    }

    /// <summary>For the estimate only: an UPDATE with its commit when no other write waits, measured on the 2-core VM
    /// (price-sync's default DOP of 2: 8.9 ms per write; 1,000 items in 11.8 s).</summary>
    internal const double LoneWriteMs = 10;

    /// <summary>For the estimate only: what each write costs when SQLite's one writer has a queue, measured on the 2-core VM
    /// (price-sync's Task.WhenAll: 1,000 items in 462 ms).</summary>
    internal const double QueuedWriteMs = 0.45;

    /// <summary>The database file (after set-up), for tests.</summary>
    internal string DatabasePath { get; private set; } = string.Empty;

    /// <inheritdoc/>
    public long CompletedNow => _outcomes?.SuccessesNow ?? 0;

    /// <inheritdoc/>
    public long? RejectedNow => _outcomes?.TooManyRequestsNow;

    /// <inheritdoc/>
    public int? ServerInFlightNow => _downstream?.Server.InFlightNow;

    /// <inheritdoc/>
    public async Task SetUpAsync(CancellationToken cancellationToken)
    {
        _folder = LabTempFolder.Create("price-sync");
        DatabasePath = Path.Combine(_folder.Path, "products.db");
        _connectionString = new SqliteConnectionStringBuilder { DataSource = DatabasePath, Pooling = true }.ToString();
        CreateProducts();
        _ids = ReadIds();
        _paths = _ids.Select(id => new Uri(string.Create(CultureInfo.InvariantCulture, $"price/{id}"), UriKind.Relative)).ToArray();
        _outcomes = new ItemOutcomes(_itemCount);
        _downstream = new DownstreamConnection(_options, _callTimeout);
        await _downstream.StartAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    public void RunStarting()
    {
        Outcomes.Reset();
        Volatile.Write(ref _writeTicks, 0);
        Execute("UPDATE products SET price = NULL");
        _downstream!.RunStarting();
    }

    /// <inheritdoc/>
    public IoRunMetrics RunFinished(double elapsedMs)
    {
        var metrics = Outcomes.Collect(elapsedMs) with { WriteWaitMs = Volatile.Read(ref _writeTicks) * 1000.0 / Stopwatch.Frequency };
        return _downstream!.ServerMetrics(metrics);
    }

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        if (_downstream is not null)
        {
            await _downstream.DisposeAsync().ConfigureAwait(false);
            _downstream = null;
        }

        if (_folder is not null)
        {
            // Pooled connections keep the file open; let them go before the folder is deleted.
            SqliteConnection.ClearAllPools();
            _folder.Dispose();
            _folder = null;
        }
    }

    /// <inheritdoc/>
    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        using var scope = Probe.Enter();
        var outcomes = Outcomes;
        var started = Stopwatch.GetTimestamp();
        try
        {
            decimal price;
            using (var response = await _downstream!.Client.GetAsync(_paths[index], cancellationToken).ConfigureAwait(false))
            {
                if (!response.IsSuccessStatusCode)
                {
                    outcomes.FailedWithStatus((int)response.StatusCode);
                    return;
                }

                using var body = await JsonDocument.ParseAsync(await response.Content.ReadAsStreamAsync(cancellationToken).ConfigureAwait(false), cancellationToken: cancellationToken).ConfigureAwait(false);
                price = body.RootElement.GetProperty("price").GetDecimal();
            }

            var writeStarted = Stopwatch.GetTimestamp();
            await SavePriceAsync(_ids[index], price, cancellationToken).ConfigureAwait(false);
            Interlocked.Add(ref _writeTicks, Stopwatch.GetTimestamp() - writeStarted);
            outcomes.Succeeded(index, started);
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested && ex is not OutOfMemoryException)
        {
            outcomes.Failed(ex);
        }
    }

    /// <summary>The prices now in the database by product id (null where none was written), for tests.</summary>
    internal Dictionary<long, decimal?> ReadPrices()
    {
        using var connection = Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT id, price FROM products";
        using var reader = command.ExecuteReader();
        var prices = new Dictionary<long, decimal?>();
        while (reader.Read())
        {
            prices[reader.GetInt64(0)] = reader.IsDBNull(1) ? null : reader.GetDecimal(1);
        }

        return prices;
    }

    private async Task SavePriceAsync(long id, decimal price, CancellationToken cancellationToken)
    {
        var connection = Open();
        await using (connection.ConfigureAwait(false))
        {
            var command = connection.CreateCommand();
            await using (command.ConfigureAwait(false))
            {
                command.CommandText = "UPDATE products SET price = $price WHERE id = $id";
                command.Parameters.AddWithValue("$price", price);
                command.Parameters.AddWithValue("$id", id);
                await command.ExecuteNonQueryAsync(cancellationToken).ConfigureAwait(false);
            }
        }
    }

    private void CreateProducts()
    {
        using var connection = Open();
        using (var pragma = connection.CreateCommand())
        {
            // WAL: readers never block the writer; there is still exactly one writer at a time.
            pragma.CommandText = "PRAGMA journal_mode = WAL; CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price TEXT)";
            pragma.ExecuteNonQuery();
        }

        using var transaction = connection.BeginTransaction();
        using var insert = connection.CreateCommand();
        insert.Transaction = transaction;
        insert.CommandText = "INSERT INTO products (id, name) VALUES ($id, $name)";
        var id = insert.Parameters.Add("$id", SqliteType.Integer);
        var name = insert.Parameters.Add("$name", SqliteType.Text);
        for (var i = 0; i < _itemCount; i++)
        {
            // Sparse ids, so item index and product id differ and a mix-up would show.
            id.Value = 1000 + (i * 7);
            name.Value = $"product-{i}";
            insert.ExecuteNonQuery();
        }

        transaction.Commit();
    }

    private long[] ReadIds()
    {
        using var connection = Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT id FROM products ORDER BY id";
        using var reader = command.ExecuteReader();
        var ids = new List<long>(_itemCount);
        while (reader.Read())
        {
            ids.Add(reader.GetInt64(0));
        }

        return [.. ids];
    }

    private void Execute(string sql)
    {
        using var connection = Open();
        using var command = connection.CreateCommand();
        command.CommandText = sql;
        command.ExecuteNonQuery();
    }

    private SqliteConnection Open()
    {
        var connection = new SqliteConnection(_connectionString);
        connection.Open();
        return connection;
    }

    private ItemOutcomes Outcomes => _outcomes ?? throw new InvalidOperationException($"{Name} runs only between SetUpAsync and DisposeAsync.");
}
