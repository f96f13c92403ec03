using FanOut.Redis.Adaptive;
using FanOut.Redis.Diagnostics;

namespace FanOut.Redis.Leases;

/// <summary>What this process last heard about the fleet (every script answers it; a <c>w:</c> message says someone is short, a <c>b:</c> message that the adaptive budget moved).</summary>
/// <remarks>A budget heard is held to <c>minBudget</c>..<c>maxBudget</c> and a pause to <c>maxPauseMs</c>: this process's options, whatever another process's were.</remarks>
internal sealed class FleetState(int budget, TimeProvider time, FleetPause? pause, RedisLimitTelemetry telemetry, int minBudget = 1, int maxBudget = int.MaxValue, long maxPauseMs = long.MaxValue)
{
    /// <summary>Other processes left short, as the last script answer (or a <c>w:</c> message) said.</summary>
    private int _othersWaiting;

    /// <summary>Other processes left short below the floor share, as the last script answer (or an <c>s:</c> message) said.</summary>
    private int _othersStarving;

    /// <summary>The fair share when Redis last answered a script (0 before the first answer): the fallback's limit during an outage.</summary>
    private int _lastShare;

    /// <summary>Active processes, this one included, as the last script answer said.</summary>
    private int _clients = 1;

    /// <summary>1 once an <c>r</c> message (a lease went back to Redis) arrived since the acquire loop last looked.</summary>
    private int _releaseHeard;

    /// <summary>Leases held fleet-wide, as the last script answer said.</summary>
    private int _inUse;

    /// <summary>The fleet budget: the configured one, or the adaptive one as Redis last said.</summary>
    private int _budget = budget;

    /// <summary>The highest <see cref="_budget"/> seen.</summary>
    private int _peak = budget;

    /// <summary>The adaptive budget's generation (decreases so far), as Redis last said.</summary>
    private long _generation;

    /// <summary>When this process learned of <see cref="_generation"/> (a timestamp of the options' clock).</summary>
    private long _generationSeenAt = long.MinValue;

    public bool OthersWaiting => Volatile.Read(ref _othersWaiting) != 0;

    public bool OthersStarving => Volatile.Read(ref _othersStarving) != 0;

    public int InUse => Volatile.Read(ref _inUse);

    public int Budget => Volatile.Read(ref _budget);

    public int Peak => Volatile.Read(ref _peak);

    public long Generation => Interlocked.Read(ref _generation);

    /// <summary>When this process learned of the current <see cref="Generation"/>: an item that started before it started under an older one.</summary>
    public long GenerationSeenAt => Interlocked.Read(ref _generationSeenAt);

    /// <summary>Called with the old and the new budget when the adaptive budget moved (outside every lock).</summary>
    public Action<int, int>? BudgetChanged { get; set; }

    /// <summary>This process's fair share of the budget: budget / active processes, rounded up.</summary>
    public int FairShare
    {
        get
        {
            var clients = Math.Max(1, Volatile.Read(ref _clients));
            return (Budget + clients - 1) / clients;
        }
    }

    /// <summary>The least share: budget / active processes, rounded down (0 when the budget is below the processes). While another process starves, one holding more hands leases back.</summary>
    public int FloorShare => Budget / Math.Max(1, Volatile.Read(ref _clients));

    /// <summary>
    /// This process's fair share when Redis last answered a script: budget / active processes, rounded up, as that answer
    /// said (0 before the first answer). Summed over the processes it is the budget plus less than one per process.
    /// </summary>
    public int LastShare => Volatile.Read(ref _lastShare);

    public void Observe(FleetView fleet)
    {
        Volatile.Write(ref _othersWaiting, fleet.OthersWaiting);
        Volatile.Write(ref _othersStarving, fleet.OthersStarving);
        Volatile.Write(ref _clients, Math.Max(1, fleet.Clients));
        Observe(fleet.InUse);
        telemetry.Expired(fleet.Expired);
        ObserveBudget(fleet.Budget, fleet.Generation, fleet.PausedMs);
        Volatile.Write(ref _lastShare, FairShare);
    }

    public void Observe(int inUse)
    {
        Volatile.Write(ref _inUse, inUse);
        telemetry.FleetInUse(inUse);
    }

    /// <summary>Takes in the adaptive budget, its generation and the fleet pause, from a script's answer or a message.</summary>
    /// <remarks>
    /// The budget is held to this process's bounds and the pause to its longest (<see cref="AdaptiveBudgetOptions.MaxPause"/>),
    /// whoever sent them. Answers may arrive out of order (a message overtaking a reply), so the generation may read one back for a moment;
    /// any change of it counts as new (after Redis lost its data the generation starts again at 0). A stale generation
    /// only makes this process skip an overload signal or send one the script then ignores.
    /// </remarks>
    public void ObserveBudget(int budget, long generation, long pausedMs)
    {
        if (pausedMs > 0)
        {
            pause?.Extend(Math.Min(pausedMs, maxPauseMs));
        }

        if (budget <= 0)
        {
            return;
        }

        // A b: message comes from any process sharing the key, whatever its options: this one holds to its own bounds.
        budget = Math.Clamp(budget, minBudget, maxBudget);

        if (Interlocked.Exchange(ref _generation, generation) != generation)
        {
            Interlocked.Exchange(ref _generationSeenAt, time.GetTimestamp());
        }

        var old = Interlocked.Exchange(ref _budget, budget);
        if (old != budget)
        {
            InterlockedMax.Raise(ref _peak, budget);
            BudgetChanged?.Invoke(old, budget);
        }
    }

    /// <summary>
    /// Another client published that it was left short: so there are at least two, whatever the last answer said (a process
    /// that took every lease before the others registered would otherwise keep a fair share of the whole budget until its
    /// next renewal, a third of a lease time later).
    /// </summary>
    public void OtherWaiting()
    {
        Volatile.Write(ref _othersWaiting, 1);
        InterlockedMax.Raise(ref _clients, 2);
    }

    /// <summary>Takes in a release's answer: the leases in use and the clients starving (this one is not: it just released).</summary>
    public void Observe((int InUse, int Starving) release)
    {
        Volatile.Write(ref _othersStarving, release.Starving);
        Observe(release.InUse);
    }

    /// <summary>Another client published that it is starving (left short below the floor share): as <see cref="OtherWaiting"/>, and this process hands leases back above the floor share.</summary>
    public void OtherStarving()
    {
        OtherWaiting();
        Volatile.Write(ref _othersStarving, 1);
    }

    /// <summary>A client published that leases went back to Redis (an <c>r</c> message).</summary>
    public void ReleaseHeard() => Volatile.Write(ref _releaseHeard, 1);

    /// <summary>True when an <c>r</c> message arrived since the last call; consumes it.</summary>
    public bool TakeReleaseHeard() => Interlocked.Exchange(ref _releaseHeard, 0) != 0;
}
