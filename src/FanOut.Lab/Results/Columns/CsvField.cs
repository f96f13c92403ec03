namespace FanOut.Lab.Results.Columns;

/// <summary>One field of results.csv: its name and the raw value (ms, bytes, counts; null leaves the field empty).</summary>
/// <param name="Name">The CSV header, camelCase like the JSON property it mirrors.</param>
/// <param name="Value">The raw value of a case.</param>
public sealed record CsvField(string Name, Func<CaseResult, object?> Value);
