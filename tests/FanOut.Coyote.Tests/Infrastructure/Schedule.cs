namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>
/// One explored schedule: a seeded choice at every point the test controls (a body, a rate limiter, an outside holder, a
/// setter, a consumer) of whether to go on at once, yield to the thread pool once or several times, or spin first.
/// </summary>
/// <remarks>
/// The library's own threads (workers queued with <c>ThreadPool.UnsafeQueueUserWorkItem</c>, continuations after
/// <c>ConfigureAwait(false)</c>) run on the real thread pool, so a seed fixes the delays injected, not the whole
/// interleaving: many seeds, each a different pattern of delays around the protocol's waits, are what explore it.
/// Every choice counts a step; more than <see cref="MaxSteps"/> of them is a livelock.
/// </remarks>
public sealed class Schedule(int index, ulong seed)
{
    /// <summary>Steps one schedule may take before it is called a livelock (the scenarios take a few hundred).</summary>
    public const long MaxSteps = 100_000;

    private long _steps;

    /// <summary>The schedule's number in its exploration, from 1.</summary>
    public int Index { get; } = index;

    /// <summary>The seed of its choices.</summary>
    public ulong Seed { get; } = seed;

    /// <summary>Choices made so far.</summary>
    public long Steps => Interlocked.Read(ref _steps);

    /// <summary>Describes the state of the scenario when it hangs; set by the scenario.</summary>
    public Func<string>? Describe { get; set; }

    /// <summary>A seeded choice in [0, <paramref name="count"/>).</summary>
    public int Next(int count)
    {
        var step = Interlocked.Increment(ref _steps);
        if (step > MaxSteps)
        {
            throw new InvariantException($"livelock: more than {MaxSteps:N0} scheduling steps");
        }

        return (int)(Mix(Seed + ((ulong)step * 0x9E3779B97F4A7C15UL)) % (ulong)count);
    }

    /// <summary>True with probability <paramref name="percent"/>%.</summary>
    public bool Chance(int percent) => Next(100) < percent;

    /// <summary>
    /// <c>FANOUT_SCHEDULE_POINTS=off</c> makes every point go on at once (the choices are still counted): the baseline that
    /// shows what the injected yields add (see the project's README).
    /// </summary>
    private static readonly bool s_pointsOff = string.Equals(Environment.GetEnvironmentVariable("FANOUT_SCHEDULE_POINTS"), "off", StringComparison.OrdinalIgnoreCase);

    /// <summary>A scheduling point: go on at once, or let other work run first.</summary>
    public async ValueTask PointAsync()
    {
        var choice = Next(16);
        if (s_pointsOff)
        {
            return;
        }

        switch (choice)
        {
            case < 7:
                return;
            case < 12:
                await Task.Yield();
                return;
            case < 15:
                for (var i = Next(4) + 2; i > 0; i--)
                {
                    await Task.Yield();
                }

                return;
            default:
                Thread.SpinWait(50 + Next(2000));
                await Task.Yield();
                return;
        }
    }

    /// <summary>SplitMix64's finalizer: consecutive steps give unrelated choices.</summary>
    private static ulong Mix(ulong z)
    {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }
}
