using FanOut.Lab.Results;

namespace FanOut.Lab.Scenarios;

/// <summary>Looks up finished cases by strategy and parameters, for the verdict lines.</summary>
internal static class Find
{
    /// <summary>The succeeded case whose strategy name starts with <paramref name="strategy"/> and whose parameters match, or null.</summary>
    public static CaseResult? Case(ScenarioResult result, string strategy, params (string Key, int Value)[] parameters) =>
        result.Cases.FirstOrDefault(c => c.Succeeded
            && c.Strategy.StartsWith(strategy, StringComparison.Ordinal)
            && parameters.All(p => Number(c, p.Key) == p.Value));

    /// <summary>Milliseconds as the tables print them.</summary>
    public static string Ms(double ms) => ms switch
    {
        >= 100 => $"{ms:N0} ms",
        >= 10 => $"{ms:N1} ms",
        _ => $"{ms:N2} ms",
    };

    /// <summary>Largest int value of a parameter over the succeeded cases, or null.</summary>
    public static int? Max(ScenarioResult result, string key) =>
        result.Cases.Where(c => c.Succeeded).Select(c => (int?)Number(c, key)).Max();

    /// <summary>
    /// A numeric parameter of <paramref name="measured"/>, or null when it has none. Read through its text: parameters read
    /// back from a child process are JSON elements, not numbers.
    /// </summary>
    public static long? Number(CaseResult measured, string key) =>
        measured.Parameters.TryGetValue(key, out var value)
            ? long.Parse(value.ToString()!, System.Globalization.NumberStyles.Integer, System.Globalization.CultureInfo.InvariantCulture)
            : null;
}
