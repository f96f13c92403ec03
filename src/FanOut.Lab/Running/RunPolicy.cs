namespace FanOut.Lab.Running;

/// <summary>How many times a case runs: warm-ups first, then measured runs up to a count, a time budget, or tight enough statistics.</summary>
/// <param name="Warmups">Unmeasured runs that JIT the code and let the thread pool settle.</param>
/// <param name="MinRuns">Measured runs always taken, so the error column has degrees of freedom.</param>
/// <param name="MaxRuns">Measured runs never exceeded.</param>
/// <param name="Budget">Once <paramref name="MinRuns"/> are done, no new run starts after this much measured time.</param>
public sealed record RunPolicy(int Warmups, int MinRuns, int MaxRuns, TimeSpan Budget)
{
    /// <summary>1 warm-up, 3 to 15 measured runs within 1 s, fewer when the error is within 2% of the mean, long cases once:
    /// keeps <c>fanout run all</c> near five minutes on 2 cores.</summary>
    public static RunPolicy Default { get; } = new(1, 3, 15, TimeSpan.FromSeconds(1))
    {
        LongRun = TimeSpan.FromSeconds(1),
        TightRelativeError = 0.02,
    };

    /// <summary>A run at least this long (by the ideal time before running, or by the warm-up) makes the case measured once; null never.</summary>
    /// <value>Default null; <see cref="Default"/> uses 1 s.</value>
    public TimeSpan? LongRun { get; init; }

    /// <summary>After <see cref="MinRuns"/>, stop once the error (99.9% CI half-width) is within this fraction of the mean; null never.</summary>
    /// <value>Default null; <see cref="Default"/> uses 0.02 (BenchmarkDotNet's default maximum relative error), range (0, 1).</value>
    public double? TightRelativeError { get; init; }

    /// <summary>Why a case's own policy measures it fewer times than the others (shown beside its row), or null.</summary>
    public string? Reason { get; init; }

    /// <summary>What one run of the case took when measured, for a case whose cost the model cannot see (blocking waits that
    /// starve the pool): the duration estimate uses it instead of the ideal time; null lets the model estimate.</summary>
    public TimeSpan? MeasuredRun { get; init; }

    /// <summary>True when another measured run should start after <paramref name="runs"/> runs taking <paramref name="spent"/>.</summary>
    public bool WantsAnotherRun(int runs, TimeSpan spent) =>
        runs < MinRuns || (runs < MaxRuns && spent < Budget);

    /// <summary>True when another measured run should start after runs of <paramref name="runMs"/> milliseconds:
    /// the count and budget rule, and no more once the statistics are tight.</summary>
    public bool WantsAnotherRun(IReadOnlyList<double> runMs)
    {
        ArgumentNullException.ThrowIfNull(runMs);
        if (!WantsAnotherRun(runMs.Count, TimeSpan.FromMilliseconds(runMs.Sum())))
        {
            return false;
        }

        if (runMs.Count < MinRuns || TightRelativeError is not { } tight || runMs.Count < 2)
        {
            return true;
        }

        var summary = Measurement.Summary.Of(runMs.ToArray());
        return !(summary.Error <= tight * summary.Mean);
    }

    /// <summary>The tighter of this policy and <paramref name="other"/>, field by field; this policy when <paramref name="other"/> is null.</summary>
    /// <remarks>A case's own policy can only shorten a run, never lengthen what a caller (a test, a quick look) asked for.</remarks>
    public RunPolicy Tighter(RunPolicy? other) => other is null
        ? this
        : new(Math.Min(Warmups, other.Warmups), Math.Min(MinRuns, other.MinRuns), Math.Min(MaxRuns, other.MaxRuns), Budget < other.Budget ? Budget : other.Budget)
        {
            LongRun = LongRun ?? other.LongRun,
            TightRelativeError = TightRelativeError ?? other.TightRelativeError,
            Reason = other.Reason ?? Reason,
            MeasuredRun = other.MeasuredRun ?? MeasuredRun,
        };

    /// <summary>One measured run and no warm-up, for a case whose run takes many seconds, with <paramref name="reason"/> shown beside its row.</summary>
    public static RunPolicy Once(string reason) => new(0, 1, 1, TimeSpan.Zero) { Reason = reason };
}
