// Imports rows into PostgreSQL one statement per row, as many at once as the connection pool serves.
// Usage: dotnet run --project samples/BulkImport -- "Host=127.0.0.1;Username=postgres;Database=postgres" [--rows 5000] [--pool 8]
using FanOut;

using Npgsql;

if (args.Length == 0)
{
    Console.Error.WriteLine("bulk-import: give a connection string, e.g. \"Host=127.0.0.1;Username=postgres;Database=postgres\" --rows 5000 --pool 8");
    return 2;
}

var rows = Option("--rows", 5000);
var pool = Option("--pool", 8);

// Each row also waits this long in the database: a stand-in for the triggers, constraints and indexes a real table has.
var rowWorkMs = Option("--row-work-ms", 2);

var connection = new NpgsqlConnectionStringBuilder(args[0]) { MaxPoolSize = pool };
await using var database = NpgsqlDataSource.Create(connection.ConnectionString);
await using (var create = database.CreateCommand("CREATE TABLE IF NOT EXISTS imported (id int PRIMARY KEY, name text NOT NULL, amount numeric NOT NULL)"))
{
    await create.ExecuteNonQueryAsync();
}

// Open the pool's connections before the import: the adaptive limit takes its baseline from the first calls' latency,
// and a call that also opens a connection (a TCP handshake, authentication) reads several times slower than one that does not.
await Task.WhenAll(Enumerable.Range(0, pool).Select(async _ =>
{
    await using var warm = await database.OpenConnectionAsync();
    await using var ping = new NpgsqlCommand("SELECT pg_sleep(0.05)", warm);
    await ping.ExecuteNonQueryAsync();
}));

// No number to guess: the adaptive limit grows while the pool keeps up, and backs off once statements start to queue
// for a connection (their latency rises), so it settles near the pool's size whatever the pool is.
var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = "postgres" });
var source = Enumerable.Range(1, rows).Select(id => (Id: id, Name: $"customer {id}", Amount: id * 1.25m));
await source.FanOutAsync(
    async (row, ct) =>
    {
        // Re-running a row is safe (ON CONFLICT DO NOTHING): an import stopped halfway can simply be started again.
        await using var insert = database.CreateCommand(
            "INSERT INTO imported (id, name, amount) SELECT $1, $2, $3 FROM pg_sleep($4 / 1000.0) ON CONFLICT (id) DO NOTHING");
        insert.Parameters.Add(new NpgsqlParameter<int> { TypedValue = row.Id });
        insert.Parameters.Add(new NpgsqlParameter<string> { TypedValue = row.Name });
        insert.Parameters.Add(new NpgsqlParameter<decimal> { TypedValue = row.Amount });
        insert.Parameters.Add(new NpgsqlParameter<int> { TypedValue = rowWorkMs });
        await insert.ExecuteNonQueryAsync(ct);
    },
    new FanOutOptions { Limit = limit });

await using var count = database.CreateCommand("SELECT count(*) FROM imported");
Console.WriteLine($"imported {rows} rows ({await count.ExecuteScalarAsync()} in the table) through a pool of {pool}: the limit ended at {limit.Current} (peak {limit.Peak})");
return 0;

int Option(string name, int fallback) =>
    args.SkipWhile(a => a != name).Skip(1).Select(int.Parse).FirstOrDefault(fallback);
