using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Scenarios;

/// <summary>A scenario run once per <see cref="RuntimeVariant"/> (JIT, NativeAOT, trimmed), every case of each in one table:
/// first all JIT rows, then all AOT rows, then all trimmed rows.</summary>
/// <param name="inner">The scenario itself.</param>
/// <param name="variants">The builds, JIT first.</param>
public sealed class RuntimeVariantsScenario(Scenario inner, IReadOnlyList<RuntimeVariant> variants) : Scenario
{
    /// <summary>The scenario itself.</summary>
    public Scenario Inner => inner;

    /// <summary>The builds, in table order.</summary>
    public IReadOnlyList<RuntimeVariant> Variants => variants;

    /// <inheritdoc/>
    public override string Id => inner.Id;

    /// <inheritdoc/>
    public override string Purpose => $"{inner.Purpose}; as JIT, NativeAOT and trimmed builds";

    /// <inheritdoc/>
    public override SeedReference Seed => inner.Seed;

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size) => $"{inner.Describe(size)}; builds: {string.Join(", ", variants.Select(v => v.Label))}";

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        var cases = inner.Cases(size);
        return variants.SelectMany(v => cases.Select(c => c with { Strategy = new TaggedStrategy(c.Strategy, v) })).ToArray();
    }

    /// <summary>The build and the inner scenario's case index of case <paramref name="caseIndex"/>.</summary>
    public (RuntimeVariant Variant, int InnerIndex) Locate(int caseIndex, ScenarioSize size)
    {
        var count = inner.Cases(size).Count;
        ArgumentOutOfRangeException.ThrowIfNegative(caseIndex);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(caseIndex, count * variants.Count);
        return (variants[caseIndex / count], caseIndex % count);
    }

    /// <inheritdoc/>
    /// <remarks>The inner verdict over the JIT rows, then one sentence per published build.</remarks>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var jit = measured with { Cases = measured.Cases.Where(c => !variants.Any(v => v != RuntimeVariant.Jit && IsTagged(c, v))).ToArray() };
        var verdict = inner.Verdict(jit);
        if (inner is IRuntimeVariantVerdict variantVerdict)
        {
            foreach (var variant in variants.Where(v => v != RuntimeVariant.Jit))
            {
                var rows = measured.Cases.Where(c => IsTagged(c, variant)).Select(c => c with { Strategy = Untag(c.Strategy, variant) }).ToArray();
                verdict += " " + variantVerdict.VariantVerdict(variant, jit, measured with { Cases = rows });
            }
        }

        return verdict;
    }

    private static bool IsTagged(CaseResult c, RuntimeVariant variant) => c.Strategy.EndsWith($" [{variant.Label}]", StringComparison.Ordinal);

    private static string Untag(string strategy, RuntimeVariant variant) => strategy[..^$" [{variant.Label}]".Length];

    /// <summary>The inner strategy under its tagged name, so progress lines and failed rows say which build ran.</summary>
    private sealed class TaggedStrategy(Strategy strategy, RuntimeVariant variant) : Strategy
    {
        public override string Name => variant.Tag(strategy.Name);

        public override WorkloadForms Needs => strategy.Needs;

        public override int ConcurrencyFor(int itemCount) => strategy.ConcurrencyFor(itemCount);

        public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken) =>
            strategy.RunAsync(workload, items, cancellationToken);
    }
}
