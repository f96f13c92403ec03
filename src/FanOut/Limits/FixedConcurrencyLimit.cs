namespace FanOut;

/// <summary>A limit that never changes.</summary>
internal sealed class FixedConcurrencyLimit(int limit) : ConcurrencyLimit
{
    public override int Current => limit;

    public override string Kind => "fixed";
}
