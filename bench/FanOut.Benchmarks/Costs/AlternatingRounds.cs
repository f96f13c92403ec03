using System.Diagnostics;

namespace FanOut.Benchmarks.Costs;

/// <summary>One contender of a side-by-side measurement: a name and one call of the work.</summary>
public sealed record Contender(string Name, Func<Task> RunOnce);

/// <summary>The median time, bytes and thread-pool work items of one contender's calls.</summary>
public sealed record Measured(string Name, double MedianMilliseconds, double MedianBytes, double MedianWorkItems);

/// <summary>
/// Runs contenders side by side in one process: each round runs every contender once, in an order that rotates from round
/// to round, so a slow phase of the machine (another process, a GC, the thread pool's injection) falls on all of them
/// alike. Reports medians: time by <see cref="Stopwatch"/>, bytes by <see cref="GC.GetTotalAllocatedBytes(bool)"/> (every
/// thread's allocations, precisely), thread-pool work items by <see cref="ThreadPool.CompletedWorkItemCount"/> (every hop
/// through the pool: what an <c>await Task.Yield()</c> body's cost follows).
/// </summary>
public static class AlternatingRounds
{
    public static async Task<IReadOnlyList<Measured>> RunAsync(IReadOnlyList<Contender> contenders, int rounds, int warmupRounds = 2)
    {
        var times = contenders.Select(_ => new List<double>()).ToArray();
        var bytes = contenders.Select(_ => new List<double>()).ToArray();
        var workItems = contenders.Select(_ => new List<double>()).ToArray();
        for (var round = -warmupRounds; round < rounds; round++)
        {
            for (var k = 0; k < contenders.Count; k++)
            {
                var i = (k + Math.Max(round, 0)) % contenders.Count;
                GC.Collect();
                GC.WaitForPendingFinalizers();
                var before = GC.GetTotalAllocatedBytes(precise: true);
                var itemsBefore = ThreadPool.CompletedWorkItemCount;
                var start = Stopwatch.GetTimestamp();
                await contenders[i].RunOnce().ConfigureAwait(false);
                var elapsed = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
                var allocated = GC.GetTotalAllocatedBytes(precise: true) - before;
                var hops = ThreadPool.CompletedWorkItemCount - itemsBefore;
                if (round >= 0)
                {
                    times[i].Add(elapsed);
                    bytes[i].Add(allocated);
                    workItems[i].Add(hops);
                }
            }
        }

        return contenders.Select((c, i) => new Measured(c.Name, Median(times[i]), Median(bytes[i]), Median(workItems[i]))).ToArray();
    }

    public static double Median(List<double> values)
    {
        values.Sort();
        var n = values.Count;
        return n % 2 == 1 ? values[n / 2] : (values[(n / 2) - 1] + values[n / 2]) / 2;
    }
}
