using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary><c>--aot</c> and <c>--trimmed</c>: publishes (or finds cached) the child of each build, then runs the scenarios that
/// support it once per build, side by side in one table. A build that cannot be published is reported and left out.</summary>
public static class PublishedRuns
{
    /// <summary>The settings with the supporting scenarios wrapped per build, and the runner that sends each case to its build's child.</summary>
    public static (RunSettings Settings, ICaseRunner Runner) Prepare(CliContext context, RunSettings settings, ICaseRunner jit, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(settings);
        var sourceRoot = PublishedChildCache.FindSourceRoot(AppContext.BaseDirectory) ?? PublishedChildCache.FindSourceRoot(Environment.CurrentDirectory);
        if (sourceRoot is null)
        {
            context.Error.WriteLine($"fanout: {string.Join(" and ", settings.Variants.Select(v => v.Label))} need the FanOut sources (FanOut.slnx and {PublishedChildCache.ChildProject}) to publish the child: run from the repository. Running the JIT only.");
            return (settings, jit);
        }

        var cache = new PublishedChildCache(sourceRoot, PublishedChildCache.DefaultCacheRoot());
        var runners = new Dictionary<RuntimeVariant, ICaseRunner>();
        foreach (var variant in settings.Variants)
        {
            var executable = cache.Ensure(variant, line => context.Console.WriteLine(line), out var error, cancellationToken);
            if (executable is null)
            {
                context.Error.WriteLine($"fanout: no {variant.Label} rows: {error}");
                continue;
            }

            context.Console.WriteLine($"{variant.Label} child: {executable}");
            runners[variant] = new ChildProcessCaseRunner(new ChildProcessLauncher(executable, []), settings.CaseTimeout);
        }

        if (runners.Count == 0)
        {
            return (settings, jit);
        }

        RuntimeVariant[] variants = [RuntimeVariant.Jit, .. settings.Variants.Where(runners.ContainsKey)];
        var scenarios = settings.Scenarios
            .Select(s => PublishedScenarios.Find(s.Id) is not null ? new RuntimeVariantsScenario(s, variants) : s)
            .ToArray();
        return (settings with { Scenarios = scenarios }, new RuntimeVariantCaseRunner(jit, runners));
    }
}
