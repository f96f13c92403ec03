namespace FanOut.Redis;

/// <summary>
/// The bounds and signals of an adaptive fleet budget (<see cref="RedisLimitOptions.Adaptive"/>): the budget lives in Redis
/// and moves on what every process sharing it sees. Every process sharing a key must use the same values.
/// </summary>
/// <remarks>
/// The control law (docs/redis-limit.md, "The adaptive fleet budget"): each process runs the core's adaptive law
/// (<see cref="AdaptiveLaw"/>, the law of <see cref="ConcurrencyLimit.Adaptive"/>) over its own answers and claims the limit
/// it decides; the fleet budget is the sum of the claims, held to <see cref="MinBudget"/>..<see cref="MaxBudget"/>. A "no"
/// any process sees backs every process off; a retry-after hint pauses the whole fleet until the hinted time by the Redis
/// server's clock.
/// </remarks>
public sealed record AdaptiveBudgetOptions
{
    /// <summary>The lowest the fleet budget (the most leases the fleet holds together) goes, however many overload signals arrive.</summary>
    /// <value>Default 1; 1 to <see cref="MaxBudget"/>. Each process still holds no more leases than its own law's claim, which goes down to one.</value>
    public int MinBudget { get; init; } = 1;

    /// <summary>The highest the fleet budget goes, however healthy the downstream looks.</summary>
    /// <value>Default 256; <see cref="MinBudget"/> to <see cref="RedisLimitOptions.MaxBudget"/>. The worst case of calls the fleet sends at once.</value>
    public int MaxBudget { get; init; } = DefaultMaxBudget;

    /// <summary>The default <see cref="MaxBudget"/>.</summary>
    public const int DefaultMaxBudget = 256;

    /// <summary>The budget a fleet starts with: a process's first claim is this less what the others already claim (at least one).</summary>
    /// <value>
    /// Default 4 for the whole fleet, not per process: the server place's start, below the core's
    /// <see cref="AdaptiveLimitOptions.InitialLimit"/> of 10, because a fleet's first round is every process's first
    /// contact at once and its processes are services, not pure waits; <see cref="MinBudget"/> to <see cref="MaxBudget"/>.
    /// From there each process's law grows in slow start on answers that did not queue.
    /// </value>
    public int InitialBudget { get; init; } = 4;

    /// <summary>Each process's law's back-off on a "no" (<see cref="AdaptiveLimitOptions.BackoffRatio"/>): the fleet backs off as one.</summary>
    /// <value>
    /// Default 0.9; above 0 and below 1. A downstream that rejects beyond its capacity C then sees the budget saw-tooth
    /// between 0.9 C and C + 1 (0.8 would reach lower). A back-off is at least one permit, and no more than the calls in flight.
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
