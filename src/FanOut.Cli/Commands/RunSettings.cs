using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

namespace FanOut.Cli.Commands;

/// <summary>The validated options of <c>fanout run</c>.</summary>
/// <param name="Scenarios">The scenarios to run, in order.</param>
/// <param name="Size">Scale and grid.</param>
/// <param name="InProcess">Run every case in this process instead of a child per case.</param>
/// <param name="OutPath">The results folder.</param>
/// <param name="CaseTimeout">How long one case (child process) may take before it is killed.</param>
/// <param name="Wide">Print every column in the console tables, not the compact set.</param>
public sealed record RunSettings(IReadOnlyList<Scenario> Scenarios, ScenarioSize Size, bool InProcess, string OutPath, TimeSpan CaseTimeout, bool Wide = false)
{
    /// <summary>The default per-case timeout: generous for the default sizes; --full's longest cases need --timeout.</summary>
    public static TimeSpan DefaultCaseTimeout { get; } = TimeSpan.FromMinutes(5);

    /// <summary>The published builds (<c>--aot</c>, <c>--trimmed</c>) that run beside the JIT for the scenarios that support them; empty by default.</summary>
    public IReadOnlyList<RuntimeVariant> Variants { get; init; } = [];

    /// <summary>Adds the published builds asked for; null with a one-line <paramref name="error"/> when they cannot apply to this run.</summary>
    public RunSettings? WithVariants(bool aot, bool trimmed, out string? error)
    {
        error = null;
        RuntimeVariant[] variants = [.. aot ? [RuntimeVariant.NativeAot] : Array.Empty<RuntimeVariant>(), .. trimmed ? [RuntimeVariant.Trimmed] : Array.Empty<RuntimeVariant>()];
        if (variants.Length == 0)
        {
            return this;
        }

        var flags = string.Join(" and ", variants.Select(v => v == RuntimeVariant.NativeAot ? "--aot" : "--trimmed"));
        if (InProcess)
        {
            error = $"{flags} run(s) published child processes, which --in-process does not use: drop --in-process.";
            return null;
        }

        if (!Scenarios.Any(s => PublishedScenarios.Find(s.Id) is not null))
        {
            error = $"{flags} apply only to {string.Join(", ", PublishedScenarios.Ids)} (or all); '{string.Join(", ", Scenarios.Select(s => s.Id))}' has no published build.";
            return null;
        }

        return this with { Variants = variants };
    }

    /// <summary>Validates raw options; returns the settings or a one-line error naming the bad value and the valid choices.</summary>
    public static RunSettings? Validate(
        ScenarioCatalog catalog,
        string scenario,
        double? scale,
        bool full,
        bool inProcess,
        string? outPath,
        double? timeoutSeconds,
        DateTimeOffset now,
        out string? error)
    {
        ArgumentNullException.ThrowIfNull(catalog);
        var scenarios = catalog.Select(scenario ?? string.Empty, out error);
        if (scenarios is null)
        {
            return null;
        }

        var effectiveScale = scale ?? 1.0;
        error = ScenarioSize.ValidateScale(effectiveScale);
        if (error is not null)
        {
            return null;
        }

        if (timeoutSeconds is { } t && !(double.IsFinite(t) && t > 0))
        {
            error = $"--timeout {t.ToString(System.Globalization.CultureInfo.InvariantCulture)} is not a positive number of seconds: use e.g. --timeout 600.";
            return null;
        }

        return new RunSettings(
            scenarios,
            new ScenarioSize(effectiveScale, full),
            inProcess,
            string.IsNullOrWhiteSpace(outPath) ? Lab.Results.ResultsDirectory.DefaultPath(now) : outPath,
            timeoutSeconds is { } s ? TimeSpan.FromSeconds(s) : DefaultCaseTimeout);
    }
}
