using System.Diagnostics;
using System.Globalization;

namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>What an exploration found: the first schedule that broke an invariant or hung, or none in all it ran.</summary>
public sealed record Exploration(int Schedules, int Ran, TimeSpan Elapsed, int? FirstFailure, ulong? FailingSeed, string? Failure)
{
    public bool Passed => FirstFailure is null;

    public string Summary => Passed
        ? string.Create(CultureInfo.InvariantCulture, $"{Ran:N0} schedules, no violation, in {Elapsed.TotalSeconds:F1} s")
        : string.Create(CultureInfo.InvariantCulture, $"failed at schedule {FirstFailure:N0} (seed {FailingSeed}) after {Ran:N0} ran in {Elapsed.TotalSeconds:F1} s: {Failure}");
}

/// <summary>
/// Runs a scenario under many schedules, a few at a time, and stops at the first that breaks an invariant, throws, or
/// does not finish within <see cref="HangTimeout"/> (a deadlock or livelock: the scenarios take milliseconds).
/// </summary>
/// <remarks>
/// <c>FANOUT_SCHEDULES</c> sets the schedules per scenario (default 10,000, CI's count), <c>FANOUT_SCHEDULE_SEED</c> the first
/// seed (default 1; schedule i gets seed + i - 1), <c>FANOUT_HANG_SECONDS</c> the time after which a schedule has hung (default
/// 10: far above a loaded machine's worst pause, reached only by a schedule that never finishes).
/// </remarks>
public static class Explorer
{
    /// <summary>Schedules run at once: each has its own limit, and together they keep the thread pool busy, which varies the interleavings more.</summary>
    private const int Lanes = 4;

    public static int Schedules => ReadInt("FANOUT_SCHEDULES", 10_000);

    public static TimeSpan HangTimeout => TimeSpan.FromSeconds(ReadInt("FANOUT_HANG_SECONDS", 10));

    private static ulong FirstSeed => (ulong)ReadInt("FANOUT_SCHEDULE_SEED", 1);

    public static async Task<Exploration> RunAsync(Func<Schedule, Task> scenario, int? schedules = null)
    {
        var count = schedules ?? Schedules;
        var timeout = HangTimeout;
        var firstSeed = FirstSeed;
        var next = 0;
        var ran = 0;
        var failedAt = int.MaxValue;
        string? failure = null;
        var gate = new Lock();
        var clock = Stopwatch.StartNew();

        async Task LaneAsync()
        {
            while (true)
            {
                var index = Interlocked.Increment(ref next);
                if (index > count || index > Volatile.Read(ref failedAt))
                {
                    return;
                }

                var schedule = new Schedule(index, firstSeed + (ulong)index - 1);
                string? error = null;
                try
                {
                    await Task.Run(() => scenario(schedule)).WaitAsync(timeout).ConfigureAwait(false);
                }
                catch (TimeoutException)
                {
                    error = $"no progress within {timeout.TotalSeconds:F0} s (deadlock or livelock); {schedule.Describe?.Invoke() ?? "no state"}";
                }
                catch (Exception e)
                {
                    error = e is InvariantException ? e.Message : e.ToString();
                }

                Interlocked.Increment(ref ran);
                if (error is not null)
                {
                    lock (gate)
                    {
                        if (index < failedAt)
                        {
                            failedAt = index;
                            failure = error;
                        }
                    }
                }
            }
        }

        var lanes = new Task[Lanes];
        for (var i = 0; i < lanes.Length; i++)
        {
            lanes[i] = LaneAsync();
        }

        await Task.WhenAll(lanes).ConfigureAwait(false);
        return failure is null
            ? new Exploration(count, ran, clock.Elapsed, null, null, null)
            : new Exploration(count, ran, clock.Elapsed, failedAt, firstSeed + (ulong)failedAt - 1, failure);
    }

    private static int ReadInt(string name, int fallback) =>
        int.TryParse(Environment.GetEnvironmentVariable(name), NumberStyles.Integer, CultureInfo.InvariantCulture, out var value) && value > 0
            ? value
            : fallback;
}
