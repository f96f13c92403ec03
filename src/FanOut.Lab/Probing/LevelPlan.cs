namespace FanOut.Lab.Probing;

/// <summary>How long one concurrency level is measured, and how long the rate check lets a token bucket refill.</summary>
/// <remarks>A level ends once it has both <see cref="MinRequests"/> answers and <see cref="MinDuration"/> of time, or at
/// <see cref="MaxDuration"/>, whichever comes first; requests in flight then finish and count.</remarks>
public sealed record LevelPlan
{
    /// <summary>The plan <c>fanout probe</c> uses: at least 1 s and 50 answers per level, at most 10 s; a 1 s pause before the burst; a 3 s open-loop check.</summary>
    public static LevelPlan Default { get; } = new();

    /// <summary>The shortest time a level runs.</summary>
    /// <value>Default 1 s; positive.</value>
    public TimeSpan MinDuration { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>The fewest answers a level collects (unless <see cref="MaxDuration"/> comes first).</summary>
    /// <value>Default 50; at least 1.</value>
    public int MinRequests { get; init; } = 50;

    /// <summary>The longest time a level runs.</summary>
    /// <value>Default 10 s; at least <see cref="MinDuration"/>.</value>
    public TimeSpan MaxDuration { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>How long the open-loop check offers constant-arrival-rate load at the recommended limit.</summary>
    /// <value>Default 3 s; positive.</value>
    public TimeSpan OpenLoopDuration { get; init; } = TimeSpan.FromSeconds(3);

    /// <summary>The most arrivals the open-loop check sends (a fast endpoint's check is then shorter than <see cref="OpenLoopDuration"/>).</summary>
    /// <value>Default 3,000; at least 1.</value>
    public int OpenLoopMaxRequests { get; init; } = 3_000;

    /// <summary>The idle time before the rate check's burst, so a token bucket can refill.</summary>
    /// <value>Default 1 s; zero or positive.</value>
    public TimeSpan BurstPause { get; init; } = TimeSpan.FromSeconds(1);
}
