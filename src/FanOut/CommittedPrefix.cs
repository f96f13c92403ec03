namespace FanOut;

/// <summary>
/// How far an ordered stream has got without a gap: every item whose index is below <see cref="Length"/> succeeded and was
/// consumed. Pass one in <see cref="FanOutOptions.CommittedPrefix"/> with <see cref="FanOutOptions.Ordered"/> and read it
/// while (or after) enumerating; it is what a consumer of a partitioned log may commit (first offset + <see cref="Length"/>).
/// </summary>
/// <remarks>
/// <para>
/// An item counts once the consumer has finished with it: when the consumer asks for the next one (the next
/// <c>MoveNextAsync</c>, or the one that ends the stream), not when the stream yields it. So a consumer that crashes, breaks or
/// throws while handling item k leaves <see cref="Length"/> at k or below, and a value read from another thread (a periodic
/// committer) never covers an item still being handled.
/// </para>
/// <para>
/// The prefix stops at the first item that did not succeed and never moves past it: in <see cref="ErrorMode.FailFast"/> the
/// stream then yields nothing after that index and throws; in <see cref="ErrorMode.RunAll"/> and with <c>FanOutOutcomes</c>
/// the stream goes on, the prefix does not. Reading costs one volatile read; the stream updates it with one volatile write
/// per consumed item and allocates nothing.
/// </para>
/// <para>
/// A stream resets it to 0 when its enumeration starts, so one instance follows one enumeration at a time: give each stream
/// enumerated concurrently its own (options are records: <c>options with { CommittedPrefix = new() }</c>).
/// </para>
/// </remarks>
public sealed class CommittedPrefix
{
    private long _length;

    /// <summary>
    /// The highest index below which every item succeeded and was consumed: items <c>0</c> to <c>Length - 1</c> did;
    /// item <c>Length</c> has not (yet). Safe to read from any thread.
    /// </summary>
    public long Length => Volatile.Read(ref _length);

    /// <summary>Returns the length, for logs.</summary>
    /// <returns>For example <c>"committed prefix: 42"</c>.</returns>
    public override string ToString() => $"committed prefix: {Length}";

    /// <summary>Starts following a new enumeration whose first item has index <paramref name="firstIndex"/>.</summary>
    internal void Reset(long firstIndex) => Volatile.Write(ref _length, firstIndex);

    /// <summary>Every item below <paramref name="length"/> succeeded and was consumed. Called by the stream's consumer only.</summary>
    internal void Advance(long length) => Volatile.Write(ref _length, length);
}
