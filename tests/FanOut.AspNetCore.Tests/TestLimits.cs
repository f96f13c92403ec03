namespace FanOut.AspNetCore.Tests;

/// <summary>A fixed limit that records every outcome it is told (through the public RecordStart/RecordCompletion).</summary>
internal sealed class RecordingLimit(int limit) : ConcurrencyLimit
{
    private readonly List<ItemOutcome> _outcomes = [];

    public override int Current => limit;

    public override string Kind => "recording";

    public IReadOnlyList<ItemOutcome> Outcomes
    {
        get
        {
            lock (_outcomes)
            {
                return [.. _outcomes];
            }
        }
    }

    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome)
    {
        lock (_outcomes)
        {
            _outcomes.Add(outcome);
        }
    }
}

/// <summary>A limit whose store is gone: every acquire throws.</summary>
internal sealed class ThrowingLimit : ConcurrencyLimit
{
    public override int Current => 4;

    public override string Kind => "throwing";

    protected override bool TryAcquireCore() => throw new InvalidOperationException("the limit's store is unreachable");

    protected override Task<bool> WaitAsyncCore(CancellationToken cancellationToken) => throw new InvalidOperationException("the limit's store is unreachable");
}

/// <summary>A limit with no permit free whose store goes away while a request waits: TryAcquire says no, WaitAsync throws.</summary>
internal sealed class FullThenThrowingLimit : ConcurrencyLimit
{
    public override int Current => 4;

    public override string Kind => "full-then-throwing";

    protected override bool TryAcquireCore() => false;

    protected override Task<bool> WaitAsyncCore(CancellationToken cancellationToken) => Task.FromException<bool>(new InvalidOperationException("the limit's store is unreachable"));
}
