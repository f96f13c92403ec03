namespace FanOut.Lab.Outcomes;

/// <summary>When the caller of a fan-out cancels: after a time, or (for deterministic tests) when a given item starts.</summary>
public sealed class CancelPlan
{
    private readonly TimeSpan? _after;
    private readonly TimeProvider _timeProvider;

    private CancelPlan(TimeSpan? after, int atItem, TimeProvider timeProvider)
    {
        _after = after;
        AtItem = atItem;
        _timeProvider = timeProvider;
    }

    /// <summary>The item whose start cancels the call, or -1 when the plan is timed.</summary>
    public int AtItem { get; }

    /// <summary>The plan as a parameter: milliseconds after the call started, or -1 when the plan is by item.</summary>
    public int AfterMs => _after is { } after ? (int)after.TotalMilliseconds : -1;

    /// <summary>The caller cancels <paramref name="delay"/> after the call started, on <paramref name="timeProvider"/>'s timers.</summary>
    public static CancelPlan After(TimeSpan delay, TimeProvider? timeProvider = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(delay, TimeSpan.Zero);
        return new(delay, -1, timeProvider ?? TimeProvider.System);
    }

    /// <summary>The caller cancels as item <paramref name="item"/> starts (on that item's thread, before its work).</summary>
    public static CancelPlan AtItemStart(int item)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(item);
        return new(null, item, TimeProvider.System);
    }

    /// <summary>The caller's source for one run: it cancels itself after the plan's time, or is cancelled by the recorder at the plan's item.</summary>
    public CancellationTokenSource CreateSource() =>
        _after is { } after ? new CancellationTokenSource(after, _timeProvider) : new CancellationTokenSource();
}
