namespace FanOut.Lab.Running;

/// <summary>How many times a case runs: warm-ups first, then measured runs up to a count or a time budget.</summary>
/// <param name="Warmups">Unmeasured runs that JIT the code and let the thread pool settle.</param>
/// <param name="MinRuns">Measured runs always taken, so the error column has degrees of freedom.</param>
/// <param name="MaxRuns">Measured runs never exceeded.</param>
/// <param name="Budget">Once <paramref name="MinRuns"/> are done, no new run starts after this much measured time.</param>
public sealed record RunPolicy(int Warmups, int MinRuns, int MaxRuns, TimeSpan Budget)
{
    /// <summary>1 warm-up, 3 to 15 measured runs within 3 s: keeps <c>fanout run all</c> near five minutes on 2 cores.</summary>
    public static RunPolicy Default { get; } = new(1, 3, 15, TimeSpan.FromSeconds(3));

    /// <summary>True when another measured run should start after <paramref name="runs"/> runs taking <paramref name="spent"/>.</summary>
    public bool WantsAnotherRun(int runs, TimeSpan spent) =>
        runs < MinRuns || (runs < MaxRuns && spent < Budget);

    /// <summary>The tighter of this policy and <paramref name="other"/>, field by field; this policy when <paramref name="other"/> is null.</summary>
    /// <remarks>A case's own policy can only shorten a run, never lengthen what a caller (a test, a quick look) asked for.</remarks>
    public RunPolicy Tighter(RunPolicy? other) => other is null
        ? this
        : new(Math.Min(Warmups, other.Warmups), Math.Min(MinRuns, other.MinRuns), Math.Min(MaxRuns, other.MaxRuns), Budget < other.Budget ? Budget : other.Budget);
}
