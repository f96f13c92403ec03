namespace FanOut.Redis;

/// <summary>
/// The bounds and signals of an adaptive fleet budget (<see cref="RedisLimitOptions.Adaptive"/>): the budget lives in Redis
/// and moves on what every process sharing it sees. Every process sharing a key must use the same values.
/// </summary>
/// <remarks>
/// The control law (docs/redis-limit.md, "The adaptive fleet budget"): an overload signal from any process multiplies the
/// budget by <see cref="BackoffRatio"/>, at most once per latency window (items that started before the last decrease do
/// not decrease it again); a retry-after hint pauses the whole fleet until the hinted time by the Redis server's clock; the
/// budget grows by one per window (by half before the first overload) only while the fleet holds nearly all of it and a
/// process still has workers waiting, and back up to a budget that was rejected only after 2 windows (4, then 8, after
/// each rejected probe), as the core law probes a level that rejected.
/// </remarks>
public sealed record AdaptiveBudgetOptions
{
    /// <summary>The lowest the fleet budget goes, however many overload signals arrive.</summary>
    /// <value>Default 1; 1 to <see cref="MaxBudget"/>.</value>
    public int MinBudget { get; init; } = 1;

    /// <summary>The highest the fleet budget goes, however healthy the downstream looks.</summary>
    /// <value>Default 256; <see cref="MinBudget"/> to <see cref="RedisLimitOptions.MaxBudget"/>. The worst case of calls the fleet sends at once.</value>
    public int MaxBudget { get; init; } = DefaultMaxBudget;

    /// <summary>The default <see cref="MaxBudget"/>.</summary>
    public const int DefaultMaxBudget = 256;

    /// <summary>The budget a fleet starts with when Redis holds none (the first process, or after Redis lost its data).</summary>
    /// <value>
    /// Default 4 for the whole fleet, not per process: the server place's start, below the core's
    /// <see cref="AdaptiveLimitOptions.InitialLimit"/> of 10, because a fleet's first round is every process's first
    /// contact at once and its processes are services, not pure waits (first contact at a cap of 5: 3.8-4.8% rejected);
    /// <see cref="MinBudget"/> to <see cref="MaxBudget"/>. Until the first overload the budget grows by half every window in
    /// which the fleet used nearly all of it, so a fleet facing a capacity of 64 reaches it in eight windows.
    /// </value>
    public int InitialBudget { get; init; } = 4;

    /// <summary>The factor an overload signal multiplies the fleet budget by.</summary>
    /// <value>
    /// Default 0.9; above 0 and below 1. A downstream that rejects beyond its capacity C then sees the budget saw-tooth
    /// between 0.9 C and C + 1, about 95 % of C on average (0.8 would average 90 %). A decrease is at least one permit.
    /// </value>
    public double BackoffRatio { get; init; } = 0.9;

    /// <summary>The longest fleet-wide pause a retry-after hint can ask for; a longer hint pauses for this long.</summary>
    /// <value>Default 1 min (the longest retry-after a fan-out call sits out); zero to 1 h. Zero never pauses the fleet.</value>
    public TimeSpan MaxPause { get; init; } = TimeSpan.FromMinutes(1);

    /// <summary>Decides whether an item's exception means the downstream is overloaded.</summary>
    /// <value>
    /// Default <see langword="null"/>: <see cref="AdaptiveLimitOptions.IsOverloadByDefault"/> (HTTP 429/503 and
    /// <see cref="OverloadedException"/>). A client-side timeout is an overload signal whatever this says (the run judges it).
    /// Called outside every lock, from worker threads.
    /// </value>
    public Func<Exception, bool>? IsOverload { get; init; }

    /// <summary>Throws <see cref="ArgumentOutOfRangeException"/> naming the first option out of its range.</summary>
    internal void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(MinBudget, 1, Name(nameof(MinBudget)));
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxBudget, MinBudget, Name(nameof(MaxBudget)));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(MaxBudget, RedisLimitOptions.MaxBudget, Name(nameof(MaxBudget)));
        ArgumentOutOfRangeException.ThrowIfLessThan(InitialBudget, MinBudget, Name(nameof(InitialBudget)));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(InitialBudget, MaxBudget, Name(nameof(InitialBudget)));
        if (!(BackoffRatio > 0 && BackoffRatio < 1))
        {
            // Written as !(in range) so NaN fails too.
            throw new ArgumentOutOfRangeException(Name(nameof(BackoffRatio)), BackoffRatio, $"{Name(nameof(BackoffRatio))} must be above 0 and below 1; got {BackoffRatio}.");
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(MaxPause, TimeSpan.Zero, Name(nameof(MaxPause)));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(MaxPause, TimeSpan.FromHours(1), Name(nameof(MaxPause)));
    }

    private static string Name(string option) => $"{nameof(RedisLimitOptions.Adaptive)}.{option}";
}
