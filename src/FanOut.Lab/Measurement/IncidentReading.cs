namespace FanOut.Lab.Measurement;

/// <summary>One sample of an incident run: the limit beside what the server did, taken every few milliseconds.</summary>
/// <param name="Ms">Milliseconds since the run's start.</param>
/// <param name="Limit">The fan-out's limit (a fixed one's value, an adaptive one's current value).</param>
/// <param name="Answered">The server's answers so far (served + 429).</param>
/// <param name="Rejected">The server's 429s so far.</param>
/// <param name="Succeeded">Items the client saw succeed so far.</param>
public readonly record struct IncidentSample(double Ms, int Limit, long Answered, long Rejected, long Succeeded);

/// <summary>What an incident run's samples say about its judged window: when the limit settled near the capacity and what
/// followed, the goodput, and what was sent during a pause.</summary>
/// <param name="SettleMs">From <c>settleFromMs</c> to the first sample from which the limit stayed within the band to the window's
/// end (0 when it was within from the window's first sample); null when it never did.</param>
/// <param name="LimitLow">The lowest limit once settled; null when it never settled.</param>
/// <param name="LimitHigh">The highest limit once settled; null when it never settled.</param>
/// <param name="RejectedAfterSettling">The server's 429s from the settling sample to the window's end; null when it never settled.</param>
/// <param name="AnsweredAfterSettling">The server's answers (served + 429) over the same span; null when it never settled.</param>
/// <param name="SuccessesPerSecond">Items that succeeded from the change to the window's end, per second of that span.</param>
/// <param name="LimitAtChange">The limit at the change (the last sample before it).</param>
/// <param name="LimitAtEnd">The limit at the window's end (the last sample).</param>
/// <param name="PauseRejected">The server's 429s between the change and <c>settleFromMs</c> (during a Retry-After storm: the calls
/// sent into it, each turned away at once; calls admitted before it are served); 0 when the two coincide.</param>
public sealed record IncidentReading(
    double? SettleMs,
    int? LimitLow,
    int? LimitHigh,
    long? RejectedAfterSettling,
    long? AnsweredAfterSettling,
    double SuccessesPerSecond,
    int LimitAtChange,
    int LimitAtEnd,
    long PauseRejected)
{
    /// <summary>Reads <paramref name="samples"/> (in time order) for a window from <paramref name="changeMs"/> to
    /// <paramref name="endMs"/>, whose limit should settle within [<paramref name="bandLow"/>, <paramref name="bandHigh"/>] from
    /// <paramref name="settleFromMs"/> on.</summary>
    /// <returns>The reading, or null when no sample falls in the window.</returns>
    public static IncidentReading? Read(IReadOnlyList<IncidentSample> samples, double changeMs, double settleFromMs, double endMs, double bandLow, double bandHigh)
    {
        ArgumentNullException.ThrowIfNull(samples);
        var atChange = Last(samples, changeMs);
        var atSettleFrom = Last(samples, settleFromMs);
        var window = samples.Where(s => s.Ms >= settleFromMs && s.Ms <= endMs).ToList();
        if (atChange is not { } change || atSettleFrom is not { } settleFrom || window.Count == 0)
        {
            return null;
        }

        bool InBand(IncidentSample s) => s.Limit >= bandLow && s.Limit <= bandHigh;
        var settled = window.Count;
        for (var i = window.Count - 1; i >= 0 && InBand(window[i]); i--)
        {
            settled = i;
        }

        // In the band at the last sample only is entering it, not staying: nothing after it shows the limit held there.
        if (settled == window.Count - 1 && window.Count > 1)
        {
            settled = window.Count;
        }

        var end = window[^1];
        var spanSeconds = (end.Ms - changeMs) / 1000;
        var successesPerSecond = spanSeconds > 0 ? (end.Succeeded - change.Succeeded) / spanSeconds : 0;
        var pauseRejected = settleFrom.Rejected - change.Rejected;
        if (settled == window.Count)
        {
            return new(null, null, null, null, null, successesPerSecond, change.Limit, end.Limit, pauseRejected);
        }

        // The settling sample's counts are the baseline: what follows it is "after settling".
        var from = window[settled];
        var after = window.Skip(settled).ToList();
        return new(
            settled == 0 ? 0 : from.Ms - settleFromMs,     // in the band from the window's first sample: no settling needed
            after.Min(s => s.Limit),
            after.Max(s => s.Limit),
            end.Rejected - from.Rejected,
            end.Answered - from.Answered,
            successesPerSecond,
            change.Limit,
            end.Limit,
            pauseRejected);
    }

    /// <summary>The last sample at or before <paramref name="ms"/>.</summary>
    private static IncidentSample? Last(IReadOnlyList<IncidentSample> samples, double ms)
    {
        IncidentSample? last = null;
        foreach (var s in samples)
        {
            if (s.Ms > ms)
            {
                break;
            }

            last = s;
        }

        return last;
    }
}
