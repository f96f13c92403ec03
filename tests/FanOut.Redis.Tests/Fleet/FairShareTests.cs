using System.Diagnostics;
using System.Globalization;

using FanOut.Redis.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Redis.Tests.Fleet;

/// <summary>
/// Fair shares for every budget and process count, budgets that do not divide evenly included: P - 1 processes take the
/// whole budget, then a late one joins. Each process is a limit of its own (its own client id) on a shared connection, its
/// workers always wanting more than its share (each taking a permit per item of about a millisecond).
/// </summary>
public sealed class FairShareTests(RedisServer redis, ITestOutputHelper output) : IClassFixture<RedisServer>
{
    /// <summary>A hang guard: the late process got no permit within it (starved), or the shares never came within one.</summary>
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task WaitAsync_LateJoinerForBudgets1To20AndProcesses1To8_GetsAPermitAndSharesComeWithinOne()
    {
        var failures = new List<string>();
        var waits = new List<double>();
        var slowest = TimeSpan.Zero;
        var slowestCase = string.Empty;
        for (var budget = 1; budget <= 20; budget++)
        {
            for (var processes = 1; processes <= 8; processes++)
            {
                var (failure, joined) = await RunAsync(budget, processes);
                if (failure is not null)
                {
                    failures.Add(failure);
                    continue;
                }

                waits.Add(joined.TotalMilliseconds);
                if (joined > slowest)
                {
                    (slowest, slowestCase) = (joined, string.Create(CultureInfo.InvariantCulture, $"B={budget} P={processes}"));
                }
            }
        }

        waits.Sort();
        if (waits.Count > 0)
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"the late process's first permit after: median {waits[waits.Count / 2]:0} ms, p90 {waits[waits.Count * 9 / 10]:0} ms, slowest {slowest.TotalMilliseconds:0} ms ({slowestCase})"));
        }

        Assert.True(failures.Count == 0, $"{failures.Count} of 160 cases failed:\n{string.Join("\n", failures)}");
    }

    /// <returns>A failure, or null and how long the late process waited for its first permit.</returns>
    private async Task<(string? Failure, TimeSpan Joined)> RunAsync(int budget, int processes)
    {
        var options = new RedisLimitOptions
        {
            // A key the fleet has used before (its epoch exists): the first client of a fresh key on this young server would
            // otherwise wait out the restart grace (docs/redis-limit.md), which is not what this test measures.
            Key = await redis.FreshKeyAsync(string.Create(CultureInfo.InvariantCulture, $"fair-{budget}-{processes}")),
            Budget = budget,
            LeaseTime = TimeSpan.FromSeconds(5),
            PollInterval = TimeSpan.FromMilliseconds(50),
            Linger = TimeSpan.FromMilliseconds(10),
        };
        var limits = new List<RedisConcurrencyLimit>();
        var workers = new List<Task>();
        using var stop = new CancellationTokenSource();
        var label = string.Create(CultureInfo.InvariantCulture, $"B={budget} P={processes}");
        try
        {
            // Enough workers that the first processes can take the whole budget between them, and every process always
            // wants more than its share; no more (the sweep runs beside other test classes on a 2-core host).
            var perProcess = ((budget + Math.Max(1, processes - 1) - 1) / Math.Max(1, processes - 1)) + 1;
            for (var i = 0; i < processes - 1; i++)
            {
                limits.Add(Start(options, perProcess, workers, stop.Token, firstPermit: null));
            }

            // Redis's count, not the processes' own: when the budget is below the processes the budget rotates among
            // them, and a lease handed back is in flight locally longer than it is missing from Redis.
            var leases = $"fanout:{{{options.Key}}}:leases";
            if (processes > 1 && !await Holds(async () => await redis.Connection.GetDatabase().SortedSetLengthAsync(leases) == budget))
            {
                return ($"{label}: the first processes never held the whole budget", TimeSpan.Zero);
            }

            var joined = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            var joinedAt = Stopwatch.GetTimestamp();
            limits.Add(Start(options, perProcess, workers, stop.Token, joined));
            if (await Task.WhenAny(joined.Task, Task.Delay(s_guard)) != joined.Task)
            {
                return ($"{label}: the late process got no permit in {s_guard.TotalSeconds:0} s (held {Shares(limits)})", TimeSpan.Zero);
            }

            var waited = Stopwatch.GetElapsedTime(joinedAt);
            var least = budget / processes;
            var most = least + (budget % processes == 0 ? 0 : 1);
            if (!await Holds(() => Task.FromResult(limits.All(limit => limit.LeasesHeld >= least && limit.LeasesHeld <= most))))
            {
                return ($"{label}: the shares never came within {least}..{most} (held {Shares(limits)})", waited);
            }

            return (null, waited);
        }
        finally
        {
            await stop.CancelAsync();
            await Task.WhenAll(workers).WaitAsync(s_guard);
            foreach (var limit in limits)
            {
                await limit.DisposeAsync();
            }
        }
    }

    private RedisConcurrencyLimit Start(RedisLimitOptions options, int workers, List<Task> running, CancellationToken stop, TaskCompletionSource? firstPermit)
    {
        var limit = RedisConcurrencyLimit.Create(redis.Connection, options);
        for (var i = 0; i < workers; i++)
        {
            running.Add(WorkAsync(limit, stop, firstPermit));
        }

        return limit;
    }

    /// <summary>One worker: a permit per item, items of about a millisecond, until stopped.</summary>
    private static async Task WorkAsync(RedisConcurrencyLimit limit, CancellationToken stop, TaskCompletionSource? firstPermit)
    {
        await Task.Yield();
        while (!stop.IsCancellationRequested)
        {
            bool granted;
            try
            {
                granted = await limit.WaitAsync(stop);
            }
            catch (OperationCanceledException)
            {
                return;
            }

            if (!granted)
            {
                return;
            }

            firstPermit?.TrySetResult();
            try
            {
                await Task.Delay(1, CancellationToken.None);
            }
            finally
            {
                limit.Release();
            }
        }
    }

    /// <summary>Waits until <paramref name="condition"/> holds (checked every 5 ms), at most <see cref="s_guard"/>.</summary>
    private static async Task<bool> Holds(Func<Task<bool>> condition)
    {
        var deadline = Stopwatch.GetTimestamp() + (long)(s_guard.TotalSeconds * Stopwatch.Frequency);
        while (!await condition())
        {
            if (Stopwatch.GetTimestamp() > deadline)
            {
                return false;
            }

            await Task.Delay(5);
        }

        return true;
    }

    private static string Shares(List<RedisConcurrencyLimit> limits) => string.Join(", ", limits.Select(limit => limit.LeasesHeld));
}
