using System.Threading.RateLimiting;

using FanOut.Execution;
using FanOut.Limits.RateLimiting;

namespace FanOut;

/// <summary>
/// A permit of a <see cref="ConcurrencyLimit"/> taken through <see cref="ConcurrencyLimitRateLimiterExtensions.AsRateLimiter"/>.
/// Disposing it gives the permit back exactly once and tells the limit how long the work took and how it ended.
/// </summary>
/// <remarks>
/// Mark the outcome before disposing: <c>if (lease is ConcurrencyLease l) l.MarkOverloaded();</c> after a 429 or 503, so an
/// adaptive limit backs off. A mark after disposal changes nothing. Not thread-safe: one owner marks and disposes it.
/// </remarks>
public sealed class ConcurrencyLease : RateLimitLease
{
    private readonly ConcurrencyLimit _limit;
    private readonly ConcurrencyLimitRateLimiter _owner;
    private readonly long _startTimestamp;
    private readonly bool _recordsSamples;

    /// <summary>The FanOut call whose permit this lease reuses (taken inside one of its bodies), or null for a permit of its own.</summary>
    private readonly CallScope? _item;

    /// <summary>The pause the downstream asked for (<see cref="MarkOverloaded(TimeSpan)"/>), told to the limit with an overloaded outcome.</summary>
    private TimeSpan? _retryAfter;

    /// <summary>1 once disposed: the permit went back.</summary>
    private int _disposed;

    /// <summary>A lease on a permit just taken from <paramref name="limit"/>; if the limit's start hook throws, the permit goes back before the exception leaves.</summary>
    internal ConcurrencyLease(ConcurrencyLimitRateLimiter owner, ConcurrencyLimit limit, bool recordsSamples)
    {
        _owner = owner;
        _limit = limit;
        _recordsSamples = recordsSamples;
        try
        {
            _startTimestamp = recordsSamples ? limit.RecordStart() : 0;
        }
        catch
        {
            // Nobody else owns the permit yet: give it back here, or it leaks (a limit of 1 would then hang every later call).
            _disposed = 1;
            limit.Release();
            limit.LeaveCall();
            throw;
        }
    }

    /// <summary>A lease that reuses a permit of the FanOut call whose body asked for it (nested use of the same limit).</summary>
    internal ConcurrencyLease(ConcurrencyLimitRateLimiter owner, ConcurrencyLimit limit, CallScope item)
    {
        _owner = owner;
        _limit = limit;
        _item = item;
        _recordsSamples = limit.LearnsFromWork;
        _startTimestamp = _recordsSamples ? limit.GetTimestamp() : 0; // no start hook: the item's own attempt was counted
    }

    /// <summary>True when this lease reuses the permit of the FanOut item whose body took it, rather than a permit of its own.</summary>
    internal bool IsNested => _item is not null;

    /// <summary>Always true: a <see cref="ConcurrencyLease"/> holds a permit until disposed.</summary>
    public override bool IsAcquired => true;

    /// <summary>How the work under this lease ended, as the limit will be told on disposal.</summary>
    /// <value>Default <see cref="ItemOutcome.Succeeded"/>.</value>
    public ItemOutcome Outcome { get; set; } = ItemOutcome.Succeeded;

    /// <summary>True once the lease was disposed and its permit given back.</summary>
    public bool IsReleased => Volatile.Read(ref _disposed) != 0;

    /// <summary>No metadata: a concurrency permit has no retry-after.</summary>
    public override IEnumerable<string> MetadataNames => [];

    /// <summary>Says the downstream was overloaded (a 429, a 503, a timeout): an adaptive limit backs off.</summary>
    public void MarkOverloaded() => Outcome = ItemOutcome.Overloaded;

    /// <summary>
    /// Says the downstream was overloaded and asked for a pause (a 429 or 503 with Retry-After): an adaptive limit backs off
    /// once and grants no permit until the pause has passed.
    /// </summary>
    /// <param name="retryAfter">The downstream's Retry-After.</param>
    public void MarkOverloaded(TimeSpan retryAfter)
    {
        Outcome = ItemOutcome.Overloaded;
        _retryAfter = retryAfter;
    }

    /// <summary>Says the work failed for a reason that says nothing about load.</summary>
    public void MarkFailed() => Outcome = ItemOutcome.Failed;

    /// <summary>Says the work was canceled: its latency says nothing about the downstream.</summary>
    public void MarkCanceled() => Outcome = ItemOutcome.Canceled;

    /// <summary>No metadata.</summary>
    /// <param name="metadataName">Ignored.</param>
    /// <param name="metadata">Always null.</param>
    /// <returns>False.</returns>
    public override bool TryGetMetadata(string metadataName, out object? metadata)
    {
        metadata = null;
        return false;
    }

    /// <summary>Reports the outcome and gives the permit back, once.</summary>
    /// <param name="disposing">Ignored: the permit goes back either way.</param>
    protected override void Dispose(bool disposing)
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (_item is not null)
        {
            // The permit is the call's: it stays with the call, which records its item's attempt. An overload the lease saw
            // (a 429 the body may handle) still reaches an adaptive limit, which backs off.
            try
            {
                if (_recordsSamples && Outcome == ItemOutcome.Overloaded)
                {
                    _limit.RecordCompletion(_startTimestamp, ItemOutcome.Overloaded, _retryAfter);
                }
            }
            finally
            {
                _item.Return();
            }

            _owner.OnLeaseReleased();
            return;
        }

        try
        {
            if (_recordsSamples)
            {
                _limit.RecordCompletion(_startTimestamp, Outcome, Outcome == ItemOutcome.Overloaded ? _retryAfter : null);
            }
        }
        finally
        {
            // Always given back, even if a metrics listener the limit notified threw.
            _limit.Release();

            // After the permit is back: while it was held, a fan-out call on the limit saw the limit shared.
            _limit.LeaveCall();
            _owner.OnLeaseReleased();
        }
    }
}
