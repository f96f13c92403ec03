using System.Diagnostics;
using System.Globalization;

using FanOut.Redis;
using FanOut.Redis.FleetWorker;

using StackExchange.Redis;

namespace FanOut.Benchmarks.Fleet;

/// <summary>
/// <c>redis-wait-cost [--rounds R] [--per-round N]</c>: the round-trip cost of <c>RedisLimitOptions.ReplicaAcknowledgements</c>
/// (<c>WAIT 1</c> after each lease-granting script) against a primary with one replica (<see cref="LocalSentinelGroup"/>), in one
/// process, alternating rounds: each round takes N permits one at a time from a limit that holds none (so each is one
/// acquire round trip) with and without WAIT, then gives them back; prints the median per acquisition and the ratio.
/// </summary>
public static class ReplicaWaitCostCommand
{
    public static async Task<int> RunAsync(string[] args, TextWriter output)
    {
        int rounds = 10, perRound = 200;
        if (!await OptionReader.TryReadAsync("redis-wait-cost", args, output, option =>
        {
            switch (option.Current)
            {
                case "--rounds": rounds = option.Number(1); break;
                case "--per-round": perRound = option.Number(1); break;
                default: throw new FormatException($"unknown option '{option.Current}': choose from --rounds, --per-round");
            }
        }))
        {
            return 2;
        }

        if (!LocalSentinelGroup.IsInstalled)
        {
            await output.WriteLineAsync($"redis-wait-cost: redis-server and redis-sentinel are needed (Debian: {LocalSentinelGroup.InstallLine})");
            return 3;
        }

        await using var group = await LocalSentinelGroup.StartAsync();
        await using var redis = await ConnectionMultiplexer.ConnectAsync(group.Configuration + ",abortConnect=false");
        var plainOptions = new RedisLimitOptions { Key = $"cost-{Guid.NewGuid():N}", Budget = 100_000, BatchSize = 1, Linger = TimeSpan.Zero, LeaseTime = TimeSpan.FromSeconds(30) };
        var waitOptions = plainOptions with { Key = $"cost-wait-{Guid.NewGuid():N}", ReplicaAcknowledgements = 1, ReplicaTimeout = TimeSpan.FromMilliseconds(500) };
        foreach (var key in new[] { plainOptions.Key, waitOptions.Key })
        {
            await redis.GetDatabase().StringSetAsync($"fanout:{{{key}}}:epoch", "fresh"); // a private server: no restart grace
        }

        await using var plain = RedisConcurrencyLimit.Create(redis, plainOptions);
        await using var waiting = RedisConcurrencyLimit.Create(redis, waitOptions);
        await output.WriteLineAsync($"redis-wait-cost: {rounds} rounds x {perRound} acquisitions each, alternating; a primary and one replica on loopback");
        var without = new List<double>();
        var with = new List<double>();
        for (var round = 0; round <= rounds; round++)
        {
            // Round 0 warms both up (scripts loaded, code compiled) and is not counted.
            var first = round % 2 == 0 ? plain : waiting;
            var second = first == plain ? waiting : plain;
            foreach (var limit in new[] { first, second })
            {
                var times = await TakeAsync(limit, perRound);
                if (round > 0)
                {
                    (limit == plain ? without : with).AddRange(times);
                }
            }
        }

        var medianWithout = Median(without);
        var medianWith = Median(with);
        await output.WriteLineAsync(string.Create(CultureInfo.InvariantCulture,
            $"  per acquisition (median of {without.Count:N0}): without WAIT {medianWithout:F0} us, with WAIT 1 {medianWith:F0} us; ratio {medianWith / medianWithout:F2}; p90 {Percentile(without, 0.9):F0} us vs {Percentile(with, 0.9):F0} us"));
        return 0;
    }

    private static async Task<List<double>> TakeAsync(RedisConcurrencyLimit limit, int count)
    {
        var times = new List<double>(count);
        for (var i = 0; i < count; i++)
        {
            var started = Stopwatch.GetTimestamp();
            if (!await limit.WaitAsync(CancellationToken.None))
            {
                throw new InvalidOperationException("no permit");
            }

            times.Add(Stopwatch.GetElapsedTime(started).TotalMicroseconds);
        }

        for (var i = 0; i < count; i++)
        {
            limit.Release();
        }

        // Let the idle leases go back, so the next round's permits are each a round trip again.
        while (limit.LeasesHeld > 0)
        {
            await Task.Delay(20);
        }

        return times;
    }

    private static double Median(List<double> values) => Percentile(values, 0.5);

    private static double Percentile(List<double> values, double p)
    {
        var sorted = values.Order().ToList();
        return sorted[(int)Math.Min(sorted.Count - 1, p * sorted.Count)];
    }
}
