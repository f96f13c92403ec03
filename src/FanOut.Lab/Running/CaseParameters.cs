using FanOut.Lab.Scenarios;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.Running;

/// <summary>The <c>parameters</c> object of a case in results.json: the item count, then the workload's own.</summary>
public static class CaseParameters
{
    /// <summary>Parameters of <paramref name="labCase"/> run with <paramref name="workload"/>.</summary>
    public static IReadOnlyDictionary<string, object> Of(LabCase labCase, Workload workload)
    {
        ArgumentNullException.ThrowIfNull(labCase);
        ArgumentNullException.ThrowIfNull(workload);
        var parameters = new Dictionary<string, object> { ["itemCount"] = labCase.ItemCount };
        foreach (var (key, value) in workload.Parameters)
        {
            parameters[key] = value;
        }

        return parameters;
    }
}
