using FanOut.Lab.Results;

namespace FanOut.Lab.Scenarios;

/// <summary>Looks up finished cases by strategy and parameters, for the verdict lines.</summary>
internal static class Find
{
    /// <summary>The succeeded case whose strategy name starts with <paramref name="strategy"/> and whose parameters match, or null.</summary>
    public static CaseResult? Case(ScenarioResult result, string strategy, params (string Key, int Value)[] parameters) =>
        result.Cases.FirstOrDefault(c => c.Succeeded
            && c.Strategy.StartsWith(strategy, StringComparison.Ordinal)
            && parameters.All(p => c.Parameters.TryGetValue(p.Key, out var v) && Convert.ToInt64(v.ToString(), System.Globalization.CultureInfo.InvariantCulture) == p.Value));

    /// <summary>Milliseconds as the tables print them.</summary>
    public static string Ms(double ms) => ms switch
    {
        >= 100 => $"{ms:N0} ms",
        >= 10 => $"{ms:N1} ms",
        _ => $"{ms:N2} ms",
    };

    /// <summary>Largest int value of a parameter over the succeeded cases, or null.</summary>
    public static int? Max(ScenarioResult result, string key) =>
        result.Cases.Where(c => c.Succeeded && c.Parameters.ContainsKey(key))
            .Select(c => (int?)Convert.ToInt32(c.Parameters[key].ToString(), System.Globalization.CultureInfo.InvariantCulture))
            .Max();
}
