namespace FanOut;

/// <summary>No limit on items in flight.</summary>
internal sealed class UnboundedConcurrencyLimit : ConcurrencyLimit
{
    public override int Current => int.MaxValue;

    public override string Kind => "unbounded";

    /// <summary>Synchronous bodies gain nothing from more workers than cores; asynchronous ones spawn more as they go pending.</summary>
    internal override int WorkerHint => Environment.ProcessorCount;
}
