using System.Globalization;
using System.Text.RegularExpressions;

using FanOut.Lab.ServerOverload;

using Npgsql;

namespace FanOut.Samples.Tests;

/// <summary>samples/BulkImport into a real PostgreSQL (started as postgres in a temp folder) through pools of two sizes.</summary>
public sealed partial class BulkImportSampleTests
{
    [PostgresFact]
    public async Task BulkImport_PoolsOfFourAndSixteen_ImportsEveryRowOnce_RunAgainAddsNothing_LimitFillsThePool()
    {
        await using var postgres = await PostgresServer.StartAsync();
        foreach (var pool in new[] { 4, 16 })
        {
            await using var reset = new NpgsqlConnection(postgres.ConnectionString);
            await reset.OpenAsync();
            await using (var drop = new NpgsqlCommand("DROP TABLE IF EXISTS imported", reset))
            {
                await drop.ExecuteNonQueryAsync();
            }

            // Twice: the second run finds every row there and adds none (an import stopped halfway is run again).
            for (var run = 0; run < 2; run++)
            {
                await using var import = SampleProcess.Start("BulkImport", postgres.ConnectionString, "--rows", "3000", "--pool", pool.ToString(CultureInfo.InvariantCulture));
                Assert.Equal(0, await import.WaitForExitAsync());

                var line = await import.WaitForLineAsync("imported ");
                var match = Summary().Match(line);
                Assert.True(match.Success, line);
                Assert.Equal(("3000", "3000"), (match.Groups["rows"].Value, match.Groups["table"].Value));
                await using var count = new NpgsqlCommand("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM imported", reset);
                await using var rows = await count.ExecuteReaderAsync();
                Assert.True(await rows.ReadAsync());
                Assert.Equal((3000L, 3000L, 1, 3000), (rows.GetInt64(0), rows.GetInt64(1), rows.GetInt32(2), rows.GetInt32(3)));

                // The limit used the whole pool (it grew to it at least) and found a level: the queue for connections stopped
                // its growth before the adaptive default's ceiling of 256. (Where in between: the README's figures.)
                var peak = int.Parse(match.Groups["peak"].Value, CultureInfo.InvariantCulture);
                var ended = int.Parse(match.Groups["limit"].Value, CultureInfo.InvariantCulture);
                Assert.True(peak >= pool && ended < 256, $"pool {pool}: {line}");
            }
        }
    }

    [GeneratedRegex(@"^imported (?<rows>\d+) rows \((?<table>\d+) in the table\) through a pool of \d+: the limit ended at (?<limit>\d+) \(peak (?<peak>\d+)\)$")]
    private static partial Regex Summary();
}
