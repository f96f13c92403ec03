using System.Text.Json;
using System.Text.Json.Serialization;

namespace FanOut.Lab.Results;

/// <summary>The one set of JSON settings for results.json and for the child-process protocol.</summary>
public static class ResultsJson
{
    /// <summary>camelCase, indented, nulls kept (a null errorMs says "fewer than two runs").</summary>
    public static JsonSerializerOptions Options { get; } = new(JsonSerializerDefaults.Web)
    {
        WriteIndented = true,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
        // Efficiency is NaN when a case measured nothing; JSON has no NaN, so write it as a string rather than fail.
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
    };

    /// <summary>Serialises <paramref name="value"/>.</summary>
    public static string Serialize<T>(T value) => JsonSerializer.Serialize(value, Options);

    /// <summary>Deserialises <paramref name="json"/>.</summary>
    public static T Deserialize<T>(string json) =>
        JsonSerializer.Deserialize<T>(json, Options) ?? throw new JsonException($"Expected a {typeof(T).Name}, found null.");
}
