using FanOut.Lab.Results;
using FanOut.Lab.Running;

namespace FanOut.Lab.Scenarios;

/// <summary>A scenario that can say what a published build (NativeAOT, trimmed) changed against the JIT.</summary>
public interface IRuntimeVariantVerdict
{
    /// <summary>One sentence on <paramref name="variant"/>'s rows (strategy names untagged) against the JIT rows.</summary>
    string VariantVerdict(RuntimeVariant variant, ScenarioResult jit, ScenarioResult published);
}
