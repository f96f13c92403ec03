using System.Diagnostics;

namespace FanOut.Benchmarks.Costs;

/// <summary>One contender of a side-by-side measurement: a name and one call of the work.</summary>
public sealed record Contender(string Name, Func<Task> RunOnce);

/// <summary>The median time and bytes of one contender's calls.</summary>
public sealed record Measured(string Name, double MedianMilliseconds, double MedianBytes);

/// <summary>
/// Runs contenders side by side in one process: each round runs every contender once, in an order that rotates from round
/// to round, so a slow phase of the machine (another process, a GC, the thread pool's injection) falls on all of them
/// alike. Reports medians: time by <see cref="Stopwatch"/>, bytes by <see cref="GC.GetTotalAllocatedBytes(bool)"/> (every
/// thread's allocations, precisely).
/// </summary>
public static class AlternatingRounds
{
    public static async Task<IReadOnlyList<Measured>> RunAsync(IReadOnlyList<Contender> contenders, int rounds, int warmupRounds = 2)
    {
        var times = contenders.Select(_ => new List<double>()).ToArray();
        var bytes = contenders.Select(_ => new List<double>()).ToArray();
        for (var round = -warmupRounds; round < rounds; round++)
        {
            for (var k = 0; k < contenders.Count; k++)
            {
                var i = (k + Math.Max(round, 0)) % contenders.Count;
                GC.Collect();
                GC.WaitForPendingFinalizers();
                var before = GC.GetTotalAllocatedBytes(precise: true);
                var start = Stopwatch.GetTimestamp();
                await contenders[i].RunOnce().ConfigureAwait(false);
                var elapsed = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
                var allocated = GC.GetTotalAllocatedBytes(precise: true) - before;
                if (round >= 0)
                {
                    times[i].Add(elapsed);
                    bytes[i].Add(allocated);
                }
            }
        }

        return contenders.Select((c, i) => new Measured(c.Name, Median(times[i]), Median(bytes[i]))).ToArray();
    }

    public static double Median(List<double> values)
    {
        values.Sort();
        var n = values.Count;
        return n % 2 == 1 ? values[n / 2] : (values[(n / 2) - 1] + values[n / 2]) / 2;
    }
}
