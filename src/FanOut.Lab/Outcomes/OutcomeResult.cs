namespace FanOut.Lab.Outcomes;

/// <summary>The error or cancellation part of a case's result: <c>outcome</c> in results.json, null for cases that only time a fan-out.</summary>
/// <remarks>Times are the mean per measured run; counts are one run's (the median run's, when the builder names it), so they are
/// whole numbers that agree with each other; the texts (final state,
/// what was thrown) list every value seen, most frequent first, so a run that differed is not hidden.</remarks>
public sealed record OutcomeResult
{
    /// <summary>Items whose work started.</summary>
    public double ItemsStarted { get; init; }

    /// <summary>Items whose work started after the trigger (the first failure, or the caller's cancellation).</summary>
    public double StartedAfterTrigger { get; init; }

    /// <summary>Items that ran to their end.</summary>
    public double Completed { get; init; }

    /// <summary>Items that threw their failure.</summary>
    public double Failed { get; init; }

    /// <summary>Items that saw the cancellation and stopped early.</summary>
    public double Canceled { get; init; }

    /// <summary>Milliseconds from the trigger to the call's return; null when no run triggered.</summary>
    public double? StopMs { get; init; }

    /// <summary>Items still running when the call returned.</summary>
    public double RunningAtReturn { get; init; }

    /// <summary>The call's final state(s), e.g. <c>Faulted</c>.</summary>
    public required string FinalState { get; init; }

    /// <summary>What the call threw to its caller, e.g. <c>ItemFailedException (item 10)</c>, or <c>nothing</c>.</summary>
    public required string Threw { get; init; }

    /// <summary>Distinct exceptions the caller can reach.</summary>
    public double ExceptionsReachable { get; init; }

    /// <summary>How many of the reachable exceptions are cancellations.</summary>
    public double CancellationsReachable { get; init; }

    /// <summary>The item that failed first, by time (every value seen), or null when none failed.</summary>
    public string? FirstFailedItem { get; init; }

    /// <summary>Distinct failed items among the reachable exceptions.</summary>
    public double FailuresReachable { get; init; }

    /// <summary>Failures the API ties to their item's index.</summary>
    public double FailuresIndexedByApi { get; init; }

    /// <summary>The counts of <paramref name="counts"/> (else the means of <paramref name="runs"/>), the mean stop time and every
    /// text seen, or null when the runs carry no outcome.</summary>
    public static OutcomeResult? Of(IReadOnlyList<OutcomeRunMetrics?> runs, OutcomeRunMetrics? counts = null)
    {
        ArgumentNullException.ThrowIfNull(runs);
        if (runs.Count == 0 || runs.Any(r => r is null))
        {
            return null;
        }

        var all = runs.Select(r => r!).ToArray();
        double Count(Func<OutcomeRunMetrics, double> metric) => counts is null ? all.Average(metric) : metric(counts);
        var stops = all.Where(r => r.StopMs is not null).Select(r => r.StopMs!.Value).ToArray();
        return new OutcomeResult
        {
            ItemsStarted = Count(r => r.ItemsStarted),
            StartedAfterTrigger = Count(r => r.StartedAfterTrigger),
            Completed = Count(r => r.Completed),
            Failed = Count(r => r.Failed),
            Canceled = Count(r => r.Canceled),
            StopMs = stops.Length == 0 ? null : stops.Average(),
            RunningAtReturn = Count(r => r.RunningAtReturn),
            FinalState = Texts(all.Select(r => r.FinalState)),
            Threw = Texts(all.Select(r => r.ThrewItem is { } item ? $"{r.Threw} (item {item})" : r.Threw)),
            ExceptionsReachable = Count(r => r.ExceptionsReachable),
            CancellationsReachable = Count(r => r.CancellationsReachable),
            FirstFailedItem = all.Any(r => r.FirstFailedItem is not null) ? Texts(all.Select(r => r.FirstFailedItem?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "none")) : null,
            FailuresReachable = Count(r => r.FailuresReachable),
            FailuresIndexedByApi = Count(r => r.FailuresIndexedByApi),
        };
    }

    private static string Texts(IEnumerable<string> values) =>
        string.Join(" / ", values.GroupBy(v => v, StringComparer.Ordinal).OrderByDescending(g => g.Count()).Select(g => g.Key));
}
