namespace FanOut.Limits.Adaptive;

/// <summary>What the adaptive law decided: the limit, and why it is what it is.</summary>
/// <param name="Limit">The limit decided.</param>
/// <param name="Reason">The rule that decided it (<see cref="LimitChangeReason.Hold"/> when it kept the limit).</param>
internal readonly record struct LimitDecision(int Limit, LimitChangeReason Reason)
{
    /// <summary>Keeps <paramref name="limit"/>.</summary>
    public static LimitDecision Hold(int limit) => new(limit, LimitChangeReason.Hold);
}
