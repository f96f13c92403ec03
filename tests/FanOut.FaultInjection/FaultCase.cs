namespace FanOut.FaultInjection;

/// <summary>Which public entry point a case calls.</summary>
public enum Overload
{
    ResultsAsync,
    ActionsAsync,
    UnorderedStream,
    OrderedStream,
    Outcomes,
}

/// <summary>How a case's items are handed over.</summary>
public enum SourceShape
{
    Array,
    List,
    LazyEnumerable,
    AsyncEnumerable,
}

/// <summary>What one item's body does.</summary>
public enum BodyBehavior
{
    CompleteSynchronously,
    YieldThenComplete,
    DelayThenComplete,
    ThrowBeforeAwait,
    ThrowAfterAwait,
    ThrowCanceledWithoutCancellation,
    ThrowCanceledIfCanceled,
    BlockBriefly,

    /// <summary>Takes a lease of the item's own limit (<c>AsRateLimiter()</c>) inside the body, then yields.</summary>
    NestedLease,

    /// <summary>Runs an inner <c>FanOutAsync</c> of three items on the item's own limit.</summary>
    NestedFanOut,
}

/// <summary>Where the source itself fails.</summary>
public enum SourceFault
{
    None,
    GetEnumerator,
    MoveNext,
    Current,
    Dispose,
}

/// <summary>One generated call: everything needed to replay it.</summary>
public sealed record FaultCase
{
    public required Overload Overload { get; init; }

    public required SourceShape Shape { get; init; }

    public required ErrorMode Errors { get; init; }

    public required BodyBehavior[] Bodies { get; init; }

    public SourceFault SourceFault { get; init; }

    /// <summary>The item at which MoveNext or Current throws.</summary>
    public int SourceFaultAt { get; init; }

    /// <summary>The caller cancels when this item's body starts (-1: never).</summary>
    public int CancelAtItem { get; init; } = -1;

    /// <summary>A stream's consumer breaks after this many results (-1: never).</summary>
    public int BreakAfter { get; init; } = -1;

    public int ItemCount => Bodies.Length;

    public static bool Fails(BodyBehavior behavior) => behavior is BodyBehavior.ThrowBeforeAwait or BodyBehavior.ThrowAfterAwait or BodyBehavior.ThrowCanceledWithoutCancellation;

    public override string ToString() =>
        $"{Overload} over {Shape} of {ItemCount}, {Errors}, source fault {SourceFault}@{SourceFaultAt}, cancel@{CancelAtItem}, break@{BreakAfter}, " +
        $"failing items [{string.Join(",", Bodies.Select((b, i) => (b, i)).Where(x => Fails(x.b)).Select(x => $"{x.i}:{x.b}"))}]";
}
