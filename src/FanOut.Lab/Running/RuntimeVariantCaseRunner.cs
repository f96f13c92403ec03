using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Running;

/// <summary>Runs the cases of a <see cref="RuntimeVariantsScenario"/> in the child of their build, and every other scenario's in the JIT child.</summary>
/// <param name="jit">The normal runner.</param>
/// <param name="published">A runner per published build (the child process of that build).</param>
public sealed class RuntimeVariantCaseRunner(ICaseRunner jit, IReadOnlyDictionary<RuntimeVariant, ICaseRunner> published) : ICaseRunner
{
    /// <inheritdoc/>
    public async Task<CaseResult> RunAsync(Scenario scenario, ScenarioSize size, int caseIndex, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        if (scenario is not RuntimeVariantsScenario variants)
        {
            return await jit.RunAsync(scenario, size, caseIndex, cancellationToken).ConfigureAwait(false);
        }

        var (variant, innerIndex) = variants.Locate(caseIndex, size);
        var runner = variant == RuntimeVariant.Jit ? jit : published[variant];
        var result = await runner.RunAsync(variants.Inner, size, innerIndex, cancellationToken).ConfigureAwait(false);
        return result with { Strategy = variant.Tag(result.Strategy) };
    }
}
