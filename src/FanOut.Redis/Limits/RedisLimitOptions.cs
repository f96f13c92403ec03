namespace FanOut.Redis;

/// <summary>
/// The settings of a <see cref="RedisConcurrencyLimit"/>: a fixed <see cref="Budget"/>, or an <see cref="Adaptive"/> one the
/// fleet finds together. Every process sharing a budget must use the same <see cref="Key"/>, <see cref="Budget"/> (or
/// <see cref="Adaptive"/> bounds) and <see cref="LeaseTime"/>.
/// </summary>
public sealed record RedisLimitOptions
{
    /// <summary>The shortest lease time accepted.</summary>
    public static readonly TimeSpan MinLeaseTime = TimeSpan.FromMilliseconds(100);

    /// <summary>The longest lease time accepted.</summary>
    public static readonly TimeSpan MaxLeaseTime = TimeSpan.FromHours(1);

    /// <summary>The largest budget accepted.</summary>
    public const int MaxBudget = 100_000;

    /// <summary>The name of the shared budget; the Redis keys are <c>fanout:{Key}:*</c>.</summary>
    /// <value>Required; not empty.</value>
    public required string Key { get; init; }

    /// <summary>Permits the whole fleet may hold at once.</summary>
    /// <value>1 to <see cref="MaxBudget"/>; required unless <see cref="Adaptive"/> is set, and left unset (0) when it is.</value>
    public int Budget { get; init; }

    /// <summary>An adaptive fleet budget instead of a fixed <see cref="Budget"/>: it lives in Redis and moves on every process's overload signals.</summary>
    /// <value>Default <see langword="null"/> (a fixed <see cref="Budget"/>).</value>
    public AdaptiveBudgetOptions? Adaptive { get; init; }

    /// <summary>How long a permit stays leased without a heartbeat: a crashed process's permits come back within this time.</summary>
    /// <value>Default 10 s; <see cref="MinLeaseTime"/> to <see cref="MaxLeaseTime"/>. Held leases are renewed every third of it.</value>
    public TimeSpan LeaseTime { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>The most leases one round trip asks for; the surplus over the waiting workers stays idle here for the next items.</summary>
    /// <value>Default 8; at least 1; capped at <see cref="Budget"/>.</value>
    public int BatchSize { get; init; } = 8;

    /// <summary>How long a lease may sit idle here before it goes back to Redis for other processes.</summary>
    /// <value>Default 50 ms; zero to half of <see cref="LeaseTime"/>.</value>
    public TimeSpan Linger { get; init; } = TimeSpan.FromMilliseconds(50);

    /// <summary>The safety-net poll while waiting, in case a release message was missed; each wait is jittered to 50-150 % of it.</summary>
    /// <value>Default 250 ms; 10 ms to <see cref="LeaseTime"/>.</value>
    public TimeSpan PollInterval { get; init; } = TimeSpan.FromMilliseconds(250);

    /// <summary>How long one round trip to Redis may take before the limit treats Redis as unavailable for it.</summary>
    /// <value>
    /// Default 1 s; 10 ms to 1 min. A round trip is also bounded by a third of <see cref="LeaseTime"/> (a renewal must end
    /// before the next is due) and by the connection's own timeouts, whichever ends first. An acquisition not answered in
    /// time applies <see cref="WhenUnavailable"/>; <see cref="RedisConcurrencyLimit.DisposeAsync"/> returns within about this long.
    /// </value>
    public TimeSpan RedisTimeout { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>What an acquisition does when Redis cannot be reached.</summary>
    /// <value>Default <see cref="RedisUnavailablePolicy.Fail"/>.</value>
    public RedisUnavailablePolicy WhenUnavailable { get; init; } = RedisUnavailablePolicy.Fail;

    /// <summary>The most permits this process may hold while Redis is unreachable, under <see cref="RedisUnavailablePolicy.FallBackToLocal"/>.</summary>
    /// <value>
    /// Default 0 (required with that policy); 1 to <see cref="Budget"/> (or the adaptive <see cref="AdaptiveBudgetOptions.MaxBudget"/>)
    /// then. With <see cref="FallbackAtLastShare"/> (the default) the ceiling of the share this process last held; without
    /// it, the fallback limit itself.
    /// </value>
    public int FallbackLimit { get; init; }

    /// <summary>
    /// Under <see cref="RedisUnavailablePolicy.FallBackToLocal"/>, whether the fallback holds this process to its fair share
    /// when Redis last answered (budget / active processes, rounded up), at most <see cref="FallbackLimit"/>: N processes
    /// then admit about the budget during an outage, not N x <see cref="FallbackLimit"/>.
    /// </summary>
    /// <value>Default <see langword="true"/>. A process that never reached Redis uses <see cref="FallbackLimit"/>.</value>
    public bool FallbackAtLastShare { get; init; } = true;

    /// <summary>
    /// Replicas that must hold each script's writes that grant or renew leases (Redis <c>WAIT numreplicas timeout</c>, sent
    /// after the script on the same connection) before this process uses those leases: a promoted replica then holds
    /// every lease in use. A script not acknowledged by this many within <see cref="ReplicaTimeout"/> counts as unanswered
    /// (<see cref="WhenUnavailable"/> applies; the leases it granted are released once Redis answers).
    /// </summary>
    /// <value>Default 0 (no <c>WAIT</c>: a failover may lose the leases of the last moments before it; docs/redis-limit.md gives the bound); 0 to 16.</value>
    public int ReplicaAcknowledgements { get; init; }

    /// <summary>How long <c>WAIT</c> waits for <see cref="ReplicaAcknowledgements"/> replicas (with it above 0).</summary>
    /// <value>Default 100 ms; 1 ms to <see cref="RedisTimeout"/>.</value>
    public TimeSpan ReplicaTimeout { get; init; } = TimeSpan.FromMilliseconds(100);

    /// <summary>The clock of the heartbeat, linger and poll timers (lease expiry itself always uses the Redis server's clock).</summary>
    /// <value>Default <see cref="TimeProvider.System"/>.</value>
    public TimeProvider TimeProvider { get; init; } = TimeProvider.System;

    /// <summary>The most the fleet budget can be: <see cref="Budget"/>, or the adaptive <see cref="AdaptiveBudgetOptions.MaxBudget"/>.</summary>
    internal int CeilingBudget => Adaptive?.MaxBudget ?? Budget;

    /// <summary>The budget before Redis says otherwise: <see cref="Budget"/>, or the adaptive <see cref="AdaptiveBudgetOptions.InitialBudget"/>.</summary>
    internal int StartingBudget => Adaptive?.InitialBudget ?? Budget;

    /// <summary>Throws <see cref="ArgumentException"/> or <see cref="ArgumentOutOfRangeException"/> naming the first option out of its range.</summary>
    internal void Validate()
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(Key, nameof(Key));
        if (Adaptive is null)
        {
            if (Budget == 0)
            {
                throw new ArgumentOutOfRangeException(nameof(Budget), Budget, $"Budget is not set: choose a fixed Budget (1 to {MaxBudget}) or an Adaptive budget.");
            }

            ArgumentOutOfRangeException.ThrowIfLessThan(Budget, 1, nameof(Budget));
            ArgumentOutOfRangeException.ThrowIfGreaterThan(Budget, MaxBudget, nameof(Budget));
        }
        else if (Budget != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(Budget), Budget, $"Budget {Budget} and Adaptive exclude each other: leave Budget unset (0) for an adaptive budget, or Adaptive null for a fixed one.");
        }
        else
        {
            Adaptive.Validate();
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(LeaseTime, MinLeaseTime, nameof(LeaseTime));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(LeaseTime, MaxLeaseTime, nameof(LeaseTime));
        ArgumentOutOfRangeException.ThrowIfLessThan(BatchSize, 1, nameof(BatchSize));
        ArgumentOutOfRangeException.ThrowIfLessThan(Linger, TimeSpan.Zero, nameof(Linger));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(Linger, LeaseTime / 2, nameof(Linger));
        ArgumentOutOfRangeException.ThrowIfLessThan(PollInterval, TimeSpan.FromMilliseconds(10), nameof(PollInterval));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(PollInterval, LeaseTime, nameof(PollInterval));
        ArgumentOutOfRangeException.ThrowIfLessThan(RedisTimeout, TimeSpan.FromMilliseconds(10), nameof(RedisTimeout));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(RedisTimeout, TimeSpan.FromMinutes(1), nameof(RedisTimeout));
        if (!Enum.IsDefined(WhenUnavailable))
        {
            throw new ArgumentOutOfRangeException(nameof(WhenUnavailable), WhenUnavailable, $"'{WhenUnavailable}' is not a policy: choose {string.Join(" or ", Enum.GetNames<RedisUnavailablePolicy>())}.");
        }

        if (WhenUnavailable == RedisUnavailablePolicy.FallBackToLocal)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(FallbackLimit, 1, nameof(FallbackLimit));
            ArgumentOutOfRangeException.ThrowIfGreaterThan(FallbackLimit, CeilingBudget, nameof(FallbackLimit));
        }
        else
        {
            ArgumentOutOfRangeException.ThrowIfNegative(FallbackLimit, nameof(FallbackLimit));
        }

        ArgumentOutOfRangeException.ThrowIfNegative(ReplicaAcknowledgements, nameof(ReplicaAcknowledgements));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(ReplicaAcknowledgements, 16, nameof(ReplicaAcknowledgements));
        if (ReplicaAcknowledgements > 0)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(ReplicaTimeout, TimeSpan.FromMilliseconds(1), nameof(ReplicaTimeout));
            ArgumentOutOfRangeException.ThrowIfGreaterThan(ReplicaTimeout, RedisTimeout, nameof(ReplicaTimeout));
        }

        ArgumentNullException.ThrowIfNull(TimeProvider, nameof(TimeProvider));
    }
}
