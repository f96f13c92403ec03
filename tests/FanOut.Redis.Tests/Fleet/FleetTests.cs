using System.Globalization;

using FanOut.Redis.Tests.Infrastructure;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Fleet;

/// <summary>Several worker processes (<c>FanOut.Redis.FleetWorker</c>) sharing one budget through a real redis-server.</summary>
public sealed class FleetTests(RedisServer redis) : IClassFixture<RedisServer>
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task FanOutAsync_ThreeWorkerProcesses_HoldAtMostTheBudgetBetweenThem()
    {
        const int Budget = 6;
        var key = Key();
        using var workers = new WorkerGroup(Enumerable.Range(0, 3).Select(_ => WorkerProcess.Start(Arguments(key, Budget, items: 40, holdMs: 25, leaseMs: 2000))));

        foreach (var worker in workers)
        {
            var (exitCode, report, output) = await worker.FinishAsync(s_guard);
            Assert.True(exitCode == 0, output);
            Assert.Equal(40, report.GetProperty("ok").GetInt64());
        }

        var peak = (int)await redis.Connection.GetDatabase().StringGetAsync($"fleet-probe:{key}:peak");
        Assert.InRange(peak, Budget / 2, Budget);
        Assert.Equal(0, await LeaseCount(key));
    }

    [Fact]
    public async Task Kill_WorkerMidItem_ItsPermitsComeBackWithinTheLeaseTimeAndOthersCarryOn()
    {
        const int Budget = 4;
        const int LeaseMs = 1000;
        var key = Key();
        using var crashing = WorkerProcess.Start(Arguments(key, Budget, items: Budget, holdMs: 600_000, leaseMs: LeaseMs));
        await Eventually.TrueAsync(async () => await LeaseCount(key) == Budget, "the first worker held the whole budget", s_guard);

        // Every lease expires by the server's clock within one lease time of now (renewed every third of it until the kill).
        var database = redis.Connection.GetDatabase();
        var expiries = await database.SortedSetRangeByRankWithScoresAsync($"fanout:{{{key}}}:leases");
        var serverNow = await ServerMilliseconds(database); // read after: a renewal in between only makes the check stricter
        Assert.All(expiries, lease => Assert.True(lease.Score - serverNow <= LeaseMs, $"A lease expires {lease.Score - serverNow} ms from now."));
        crashing.Kill();
        await database.KeyDeleteAsync([$"fleet-probe:{key}:running", $"fleet-probe:{key}:peak"]); // the killed items will never leave the probe

        using var survivor = WorkerProcess.Start(Arguments(key, Budget, items: 12, holdMs: 20, leaseMs: LeaseMs));
        var (exitCode, report, output) = await survivor.FinishAsync(s_guard);

        Assert.True(exitCode == 0, output);
        Assert.Equal(12, report.GetProperty("ok").GetInt64());
        var peak = (int)await database.StringGetAsync($"fleet-probe:{key}:peak");
        Assert.InRange(peak, 1, Budget);
        Assert.Equal(0, await LeaseCount(key));
    }

    private string[] Arguments(string key, int budget, int items, int holdMs, int leaseMs) =>
    [
        "--redis", redis.Endpoint, "--key", key, "--budget", Invariant(budget), "--items", Invariant(items),
        "--hold-ms", Invariant(holdMs), "--lease-ms", Invariant(leaseMs),
    ];

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Key() => $"fleet-{Guid.NewGuid():N}";

    private Task<long> LeaseCount(string key) => redis.Connection.GetDatabase().SortedSetLengthAsync($"fanout:{{{key}}}:leases");

    private static async Task<double> ServerMilliseconds(IDatabase database)
    {
        var time = (RedisResult[])(await database.ExecuteAsync("TIME"))!;
        return ((long)time[0] * 1000.0) + ((long)time[1] / 1000.0);
    }
}
