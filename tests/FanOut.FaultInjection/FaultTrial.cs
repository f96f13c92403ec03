namespace FanOut.FaultInjection;

/// <summary>The kind of limit a trial's calls share.</summary>
public enum LimitKind
{
    Fixed,
    Adaptive,
    Unbounded,
}

/// <summary>One or more calls started together on one shared limit; replayable from its seed.</summary>
public sealed record FaultTrial(int Seed, LimitKind LimitKind, int FixedLimit, IReadOnlyList<FaultCase> Cases)
{
    public ConcurrencyLimit CreateLimit() => LimitKind switch
    {
        LimitKind.Fixed => ConcurrencyLimit.Fixed(FixedLimit),
        LimitKind.Adaptive => ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MaxLimit = 16 }),
        _ => ConcurrencyLimit.Unbounded,
    };

    public override string ToString() =>
        $"seed {Seed}: {LimitKind}{(LimitKind == LimitKind.Fixed ? $"({FixedLimit})" : "")}, {Cases.Count} call(s): " +
        string.Join(" | ", Cases);
}
