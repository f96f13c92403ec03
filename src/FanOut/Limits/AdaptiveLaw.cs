using System.Diagnostics;

using FanOut.Diagnostics;
using FanOut.Limits.Adaptive;

namespace FanOut;

/// <summary>
/// The adaptive law of <see cref="ConcurrencyLimit.Adaptive"/>, for a limit whose permits live elsewhere: told each attempt's
/// answer, it decides how many calls may be in flight, and why (docs/adaptive.md). FanOut.Redis's fleet budget runs one in
/// each process, over that process's answers, and claims its limit from the fleet's budget.
/// </summary>
/// <remarks>
/// <para>Thread-safe: answers may come from any thread. Each change of <see cref="Limit"/> is published with its reason as
/// the adaptive limit's are (the <c>FanOut</c> event source's <c>LimitChanged</c>, the <c>fanout.limit.changes</c> counter, an
/// activity event), under the kind <c>law</c> and the options' <see cref="AdaptiveLimitOptions.Name"/>, outside the lock.</para>
/// <para>What <see cref="ConcurrencyLimit.Adaptive"/> adds around it stays with the caller: enforcing the limit as permits,
/// slow start's pace and Retry-After pauses.</para>
/// </remarks>
public sealed class AdaptiveLaw
{
    private const string LawKind = "law";

    private readonly AdaptiveLimitOptions _options;
    private readonly BandwidthDelayLaw _law;
    private readonly Lock _lock = new();
    private volatile int _limit;
    private long _changes;

    /// <summary>A law at <paramref name="options"/>'s <see cref="AdaptiveLimitOptions.InitialLimit"/>, timed by its <see cref="AdaptiveLimitOptions.TimeProvider"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    public AdaptiveLaw(AdaptiveLimitOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _options = options;
        _law = new BandwidthDelayLaw(options);
        _limit = _law.Limit;
    }

    /// <summary>How many calls may be in flight now.</summary>
    public int Limit => _limit;

    /// <summary>
    /// Learns from one finished attempt: <paramref name="startTimestamp"/> is when it started (a timestamp of the options'
    /// <see cref="AdaptiveLimitOptions.TimeProvider"/>), <paramref name="inFlight"/> the calls in flight as it ended, itself
    /// included. A canceled attempt teaches nothing. Returns the limit afterwards and the rule that decided it
    /// (<see cref="LimitChangeReason.Hold"/> when it did not change).
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="inFlight"/> is below 1.</exception>
    public (int Limit, LimitChangeReason Reason) OnAnswer(long startTimestamp, ItemOutcome outcome, int inFlight)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(inFlight, 1);
        if (outcome == ItemOutcome.Canceled)
        {
            return (_limit, LimitChangeReason.Hold);
        }

        var time = _options.TimeProvider;
        var now = time.GetTimestamp();
        LimitDecision decision;
        int from;
        double median, baseline;
        long sequence = 0;
        lock (_lock)
        {
            from = _law.Limit;
            decision = _law.OnAnswer(startTimestamp, now - startTimestamp, outcome == ItemOutcome.Succeeded, outcome == ItemOutcome.Overloaded, inFlight, now);
            median = _law.ReadingMedian;
            baseline = _law.Baseline;
            _limit = _law.Limit;
            if (_law.Limit != from)
            {
                sequence = ++_changes;
            }

            Debug.Assert(decision.Limit == _law.Limit);
        }

        if (sequence == 0)
        {
            return (decision.Limit, LimitChangeReason.Hold);
        }

        var ms = 1000.0 / time.TimestampFrequency;
        LimitChangeTelemetry.Publish(LawKind, _options.Name, from, decision.Limit, decision.Reason, median * ms, baseline * ms, inFlight, sequence);
        return (decision.Limit, decision.Reason);
    }
}
