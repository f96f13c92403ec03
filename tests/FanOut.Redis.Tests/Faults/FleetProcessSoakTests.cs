using System.Net.Sockets;

using FanOut.Redis.FleetWorker.Soak;

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
        using var progress = new StringWriter();

        var result = await FleetSoak.RunAsync(options, progress).WaitAsync(s_guard);

        output.WriteLine($"seed {options.Seed}{Environment.NewLine}{progress}{result}{Environment.NewLine}{string.Join(Environment.NewLine, result.Findings)}");
        Assert.All(options.FaultKinds, kind => Assert.True(result.Faults[kind] >= 1, $"{kind} was not injected"));
        Assert.True(result.Items > 100, $"only {result.Items} items ran");
        Assert.Equal(options.Budget, result.Peak); // the budget was in use, and never exceeded
        Assert.True(result.Violations == 0, $"{result}{Environment.NewLine}{string.Join(Environment.NewLine, result.Findings)}");
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
        using var progress = new StringWriter();

        var result = await FleetSoak.RunAsync(options, progress).WaitAsync(s_guard);

        output.WriteLine($"seed {options.Seed}{Environment.NewLine}{progress}{result}{Environment.NewLine}{string.Join(Environment.NewLine, result.Findings)}");
        Assert.True(result.Rated.Starts > 20, $"only {result.Rated.Starts} starts"); // restarts and their grace take most of a brief run
        Assert.True(result.Violations == 0, $"{result}{Environment.NewLine}{string.Join(Environment.NewLine, result.Findings)}");
    }

    [Fact]
    public async Task SoakCounter_StartsAboveTheBoundTwiceOrNeverEnded_AreViolations()
    {
        await using var counter = new SoakCounter(bound: 1);
        counter.Start();
        using var first = await Worker.ConnectAsync(counter.Port, pid: 101);
        using var second = await Worker.ConnectAsync(counter.Port, pid: 102);
        var mine = (await first.AskAsync("n"))[2..].Split(',');
        var theirs = (await second.AskAsync("n"))[2..].Split(',');

        await first.AskAsync("s " + mine[0]);
        await first.AskAsync("e " + mine[0]);
        await first.AskAsync("s " + mine[0]); // the same item again
        await first.AskAsync("e " + mine[0]);
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
        var starved = (await waiting.AskAsync("n"))[2..].Split(',');
        var ids = (await running.AskAsync("n"))[2..].Split(',');
        await failing.AskAsync("n");
        await failing.AskAsync("f RedisLimitUnavailableException"); // a failed run is not a wait
        await Task.Delay(300);

        await running.AskAsync("s " + ids[0]); // the others run while it waits: not yet two starts
        await running.AskAsync("e " + ids[0]);
        Assert.Equal(0, counter.Starved);
        await running.AskAsync("s " + ids[1]);
        await running.AskAsync("e " + ids[1]);
        await running.AskAsync("s " + ids[2]); // counted once per wait
        await running.AskAsync("e " + ids[2]);
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
        var unstarted = (await waiting.AskAsync("n"))[2..].Split(',');
        var ids = (await running.AskAsync("n"))[2..].Split(',');

        counter.FaultBegins(); // a failover of several seconds: clients learn the new primary one by one
        await Task.Delay(300);
        for (var i = 0; i < 3; i++)
        {
            await running.AskAsync("s " + ids[i]);
            await running.AskAsync("e " + ids[i]);
        }

        Assert.Equal(0, counter.Starved);

        counter.FaultEnds();
        await Task.Delay(300); // still stuck after the fleet recovered: starved, counted from the fault's end
        for (var i = 3; i < 6; i++)
        {
            await running.AskAsync("s " + ids[i]);
            await running.AskAsync("e " + ids[i]);
        }

        Assert.Equal(1, counter.Starved);
        await waiting.AskAsync("s " + unstarted[0]);
        await waiting.AskAsync("e " + unstarted[0]);
    }

    [Fact]
    public async Task SoakCounter_KilledWorker_ItemsHandedOutAgainNotLost()
    {
        await using var counter = new SoakCounter(bound: 4);
        counter.Start();
        using var killed = await Worker.ConnectAsync(counter.Port, pid: 201);
        var ids = (await killed.AskAsync("n"))[2..].Split(',');
        await killed.AskAsync("s " + ids[0]);
        counter.Killing(201);
        killed.Dispose();
        await Eventually(() => counter.Interrupted == 1);
        using var next = await Worker.ConnectAsync(counter.Port, pid: 202);

        var handed = (await next.AskAsync("n"))[2..].Split(',');
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

        public void Dispose() => _client.Dispose();
    }
}
