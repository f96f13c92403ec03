using FanOut.Redis.FleetWorker.Soak;
using FanOut.Redis.Leases;
using FanOut.Redis.Tests.Infrastructure;
using FanOut.Redis.Tests.Infrastructure.FakeClock;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Faults;

/// <summary>
/// The soak's judge of a killed worker's leases (<see cref="KilledWorkerLeases"/>) against the real lease scripts on a
/// fake-clock redis-server: it allows the stall rule's shift, exactly, and still finds a lease pushed back beyond it.
/// </summary>
public sealed class KilledWorkerLeasesTests(FakeClockRedisFixture redis) : IClassFixture<FakeClockRedisFixture>
{
    private const int Pid = 4242;
    private static readonly TimeSpan s_lease = TimeSpan.FromSeconds(1);

    [FakeClockFact]
    public async Task Judge_FleetSilentPastHalfALeaseAfterTheKill_AllowsTheStallShift()
    {
        // Seed 48943072 beside two busy loops: the killed worker held the whole budget, the others only polled, and no script ran for 855 ms.
        await using var fleet = await Fleet.StartAsync(redis);
        var judge = await fleet.StallAfterAKill(); // its prelude pushes the dead leases back by 750 - 333
        await fleet.ObserveAt(judge, 960);
        await fleet.ObserveAt(judge, 1500);
        Assert.True(judge.Watching); // one lease time after the kill has passed, the shifted leases are not due yet
        await fleet.ObserveAt(judge, 1520);

        Assert.Null(judge.Finding);
        Assert.Equal(417, judge.ShiftedMs);
        Assert.Equal(900, judge.BackMs);
        Assert.Equal(2, judge.Held);
        Assert.False(judge.Watching); // past the shifted leases' expiry
    }

    [FakeClockFact]
    public async Task Judge_LeasePushedBackWithoutAStall_IsAFinding()
    {
        await using var fleet = await Fleet.StartAsync(redis);
        var judge = await fleet.KillAt(100);
        await fleet.LiveScriptAt(300);
        await fleet.ObserveAt(judge, 350);

        await fleet.LiveScriptAt(600);
        await fleet.PushDeadLeasesBack(400); // what a script that renewed a dead worker's lease would do
        await fleet.ObserveAt(judge, 650);

        Assert.Equal($"worker {Pid}'s lease pushed back 400 ms with no stall (the clock moved 300 ms)", judge.Finding);
        Assert.False(judge.Watching);
    }

    [FakeClockFact]
    public async Task Judge_LeasePushedBackBeyondTheStallShift_IsAFinding()
    {
        await using var fleet = await Fleet.StartAsync(redis);
        var judge = await fleet.StallAfterAKill();
        await fleet.PushDeadLeasesBack(200); // a shift of the whole gap, or a renewal on top of the stall's shift
        await fleet.ObserveAt(judge, 960);

        Assert.Equal($"worker {Pid}'s lease pushed back 617 ms by a stall that allows 417 ms", judge.Finding);
    }

    [FakeClockFact]
    public async Task Judge_LeaseDueLaterThanALeaseTimeAfterTheKill_IsAFinding()
    {
        await using var fleet = await Fleet.StartAsync(redis);
        await fleet.PushDeadLeasesBack(400);

        var judge = await fleet.KillAt(100);

        Assert.Equal($"worker {Pid}'s leases expire 1300 ms after the kill, above the lease time", judge.Finding);
        Assert.False(judge.Watching);
    }

    /// <summary>A budget of 3 on its own key: a dead worker holding 2 leases from time 0, and a live client whose scripts move the clock key.</summary>
    private sealed class Fleet : IAsyncDisposable
    {
        private readonly FakeClockRedisServer _server;
        private readonly ConnectionMultiplexer _connection;
        private readonly IDatabase _database;
        private readonly DateTimeOffset _start;
        private readonly LeaseStore _live;

        private Fleet(FakeClockRedisServer server, ConnectionMultiplexer connection, RedisLimitOptions options, DateTimeOffset start)
        {
            _server = server;
            _connection = connection;
            _database = connection.GetDatabase();
            _start = start;
            Key = options.Key;
            _live = new LeaseStore(_database, options, $"{Pid + 1}-live");
        }

        public string Key { get; }

        public static async Task<Fleet> StartAsync(FakeClockRedisFixture redis)
        {
            var start = redis.NextStart();
            redis.Server.SetTime(start);
            var connection = await ConnectionMultiplexer.ConnectAsync(redis.Server.Endpoint);
            var options = new RedisLimitOptions { Key = $"killed-{Guid.NewGuid():N}", Budget = 3, LeaseTime = s_lease };
            var database = connection.GetDatabase();
            await KeyEpoch.SetAsync(database, options.Key);
            var dead = new LeaseStore(database, options, $"{Pid}-dead");
            Assert.Equal(2, (await dead.AcquireAsync("fresh", [$"{Pid}-dead:1", $"{Pid}-dead:2"])).Granted);
            return new Fleet(redis.Server, connection, options, start);
        }

        public void At(int ms) => _server.SetTime(_start.AddMilliseconds(ms));

        /// <summary>The dead worker is killed at <paramref name="ms"/>: the judge starts watching its leases.</summary>
        public Task<KilledWorkerLeases> KillAt(int ms)
        {
            At(ms);
            return KilledWorkerLeases.StartAsync(_server.Port, Pid, Key, s_lease);
        }

        /// <summary>A kill at 100 ms, a live script at 200 ms, the judge's look at 900 ms, then a live script at 950 ms: 750 ms after the last, past half a lease, so the stall rule shifts the dead leases.</summary>
        public async Task<KilledWorkerLeases> StallAfterAKill()
        {
            var judge = await KillAt(100);
            await LiveScriptAt(200);
            await ObserveAt(judge, 900);
            await LiveScriptAt(950);
            return judge;
        }

        public async Task LiveScriptAt(int ms)
        {
            At(ms);
            await _live.RenewAsync("fresh", []);
        }

        public async Task ObserveAt(KilledWorkerLeases judge, int ms)
        {
            At(ms);
            await judge.ObserveAsync(_server.Port);
        }

        public async Task PushDeadLeasesBack(int ms)
        {
            foreach (var entry in await _database.SortedSetRangeByRankWithScoresAsync($"fanout:{{{Key}}}:leases"))
            {
                if (entry.Element.ToString().StartsWith($"{Pid}-", StringComparison.Ordinal))
                {
                    await _database.SortedSetAddAsync($"fanout:{{{Key}}}:leases", entry.Element, entry.Score + ms);
                }
            }
        }

        public ValueTask DisposeAsync() => _connection.DisposeAsync();
    }
}
