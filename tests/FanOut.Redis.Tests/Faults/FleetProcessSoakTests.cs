using System.Net.Sockets;

using FanOut.Redis.FleetWorker.Soak;
using FanOut.Redis.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Redis.Tests.Faults;

/// <summary>
/// The <c>redis-soak</c> command's engine (<see cref="FleetSoak"/>), short: worker processes sharing a budget while every
/// fault kind is injected once; and its referee (<see cref="SoakCounter"/>), which must see a violation when there is one.
/// </summary>
public sealed class FleetProcessSoakTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(90);

    [Fact]
    public async Task RunAsync_EveryFaultKindOnce_NoViolations()
    {
        var options = new FleetSoakOptions
        {
            Duration = TimeSpan.Zero, // until every kind was injected once
            Workers = 3,
            Budget = 7, // not a multiple of 3 or of the 4 workers a joiner makes for a moment
            LeaseTime = TimeSpan.FromSeconds(1),
            Gap = (TimeSpan.FromMilliseconds(200), TimeSpan.FromMilliseconds(400)),
        };

        var result = await SoakRuns.RunAsync(options, output, s_guard);

        SoakRuns.AssertEveryKindInjected(options, result);
        Assert.Equal(options.Budget, result.Peak); // the budget was in use, and never exceeded
        SoakRuns.AssertNoViolations(result);
    }

    [Fact]
    public async Task RunAsync_WithAFleetRate_RestartsAndJoins_StartsHeldToTheRate()
    {
        var options = new FleetSoakOptions
        {
            Kinds = [SoakFault.Restart, SoakFault.RestartJoin, SoakFault.Join],
            Rate = 200, // below what the budget of 7 with 1-10 ms items could start: the rate binds
            Duration = TimeSpan.Zero,
            Workers = 3,
            Budget = 7,
            LeaseTime = TimeSpan.FromSeconds(1),
            Gap = (TimeSpan.FromMilliseconds(500), TimeSpan.FromMilliseconds(800)),
        };

        var result = await SoakRuns.RunAsync(options, output, s_guard);

        Assert.True(result.Rated.Starts > 20, $"only {result.Rated.Starts} starts"); // restarts and their grace take most of a brief run
        SoakRuns.AssertNoViolations(result);
    }

    [Fact]
    public async Task SoakCounter_StartsAboveTheBoundTwiceOrNeverEnded_AreViolations()
    {
        await using var counter = new SoakCounter(bound: 1);
        counter.Start();
        using var first = await Worker.ConnectAsync(counter.Port, pid: 101);
        using var second = await Worker.ConnectAsync(counter.Port, pid: 102);
        var mine = await first.NextAsync();
        var theirs = await second.NextAsync();

        await first.RunAsync(mine[0]);
        await first.RunAsync(mine[0]); // the same item again
        await second.AskAsync("s " + theirs[0]);
        await first.AskAsync("s " + mine[1]); // two at once under a bound of 1
        second.Dispose(); // exits by itself with items handed to it, one started
        await Eventually(() => counter.Lost == theirs.Length);

        Assert.Equal(1, counter.AboveBound);
        Assert.Equal(1, counter.Twice);
        Assert.Equal(theirs.Length, counter.Lost);
    }

    [Fact]
    public async Task SoakCounter_WorkerWaitingWhileOthersRun_IsStarvedOnceAndItsWaitMeasured()
    {
        await using var counter = new SoakCounter(bound: 2, starveAfter: TimeSpan.FromMilliseconds(200));
        counter.Start();
        using var waiting = await Worker.ConnectAsync(counter.Port, pid: 301);
        using var running = await Worker.ConnectAsync(counter.Port, pid: 302);
        using var failing = await Worker.ConnectAsync(counter.Port, pid: 303);
        var starved = await waiting.NextAsync();
        var ids = await running.NextAsync();
        await failing.NextAsync();
        await failing.AskAsync("f RedisLimitUnavailableException"); // a failed run is not a wait
        await Task.Delay(300);

        await running.RunAsync(ids[0]); // the others run while it waits: not yet two starts
        Assert.Equal(0, counter.Starved);
        await running.RunAsync(ids[1]);
        await running.RunAsync(ids[2]); // counted once per wait
        await waiting.AskAsync("s " + starved[0]);

        Assert.Equal(1, counter.Starved);
        Assert.True(counter.WorstWaitMs >= 300, $"worst wait {counter.WorstWaitMs} ms");
    }

    [Fact]
    public async Task SoakCounter_WaitSpanningAFault_JudgedFromTheFaultsEnd()
    {
        await using var counter = new SoakCounter(bound: 2, starveAfter: TimeSpan.FromMilliseconds(200));
        counter.Start();
        using var waiting = await Worker.ConnectAsync(counter.Port, pid: 311);
        using var running = await Worker.ConnectAsync(counter.Port, pid: 312);
        var unstarted = await waiting.NextAsync();
        var ids = await running.NextAsync();

        counter.FaultBegins(); // a failover of several seconds: clients learn the new primary one by one
        await Task.Delay(300);
        for (var i = 0; i < 3; i++)
        {
            await running.RunAsync(ids[i]);
        }

        Assert.Equal(0, counter.Starved);

        counter.FaultEnds();
        await Task.Delay(300); // still stuck after the fleet recovered: starved, counted from the fault's end
        for (var i = 3; i < 6; i++)
        {
            await running.RunAsync(ids[i]);
        }

        Assert.Equal(1, counter.Starved);
        await waiting.RunAsync(unstarted[0]);
    }

    [Fact]
    public async Task SoakCounter_KilledWorker_ItemsHandedOutAgainNotLost()
    {
        await using var counter = new SoakCounter(bound: 4);
        counter.Start();
        using var killed = await Worker.ConnectAsync(counter.Port, pid: 201);
        var ids = await killed.NextAsync();
        await killed.AskAsync("s " + ids[0]);
        counter.Killing(201);
        killed.Dispose();
        await Eventually(() => counter.Interrupted == 1);
        using var next = await Worker.ConnectAsync(counter.Port, pid: 202);

        var handed = await next.NextAsync();
        await next.AskAsync("s " + ids[0]); // the interrupted item runs again: not twice

        Assert.Contains(ids[0], handed);
        Assert.Equal(0, counter.Lost);
        Assert.Equal(0, counter.Twice);
        Assert.Equal(0, counter.AboveBound);
    }

    private static async Task Eventually(Func<bool> condition)
    {
        while (!condition())
        {
            await Task.Delay(10).WaitAsync(s_guard);
        }
    }

    private sealed class Worker : IDisposable
    {
        private readonly TcpClient _client;
        private readonly StreamReader _reader;
        private readonly StreamWriter _writer;

        private Worker(TcpClient client)
        {
            _client = client;
            _reader = new StreamReader(client.GetStream());
            _writer = new StreamWriter(client.GetStream()) { AutoFlush = true, NewLine = "\n" };
        }

        public static async Task<Worker> ConnectAsync(int port, int pid)
        {
            var client = new TcpClient();
            await client.ConnectAsync(System.Net.IPAddress.Loopback, port);
            var worker = new Worker(client);
            await worker.AskAsync($"h {pid}");
            return worker;
        }

        public async Task<string> AskAsync(string line)
        {
            await _writer.WriteLineAsync(line);
            return await _reader.ReadLineAsync().WaitAsync(s_guard) ?? throw new IOException("closed");
        }

        /// <summary>Asks for items (<c>n</c>): the ids handed to this worker.</summary>
        public async Task<string[]> NextAsync() => (await AskAsync("n"))[2..].Split(',');

        /// <summary>Starts and ends item <paramref name="id"/> (<c>s</c>, then <c>e</c>).</summary>
        public async Task RunAsync(string id)
        {
            await AskAsync("s " + id);
            await AskAsync("e " + id);
        }

        public void Dispose() => _client.Dispose();
    }
}
