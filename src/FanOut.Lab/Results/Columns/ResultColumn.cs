namespace FanOut.Lab.Results.Columns;

/// <summary>One column of the results, defined once: every output (console, results.csv, report.md, report.html) reads it.</summary>
/// <remarks>
/// As BenchmarkDotNet's <c>IColumn</c>: a header, a formatted cell, a legend line, whether it applies to a scenario, and
/// its raw values for the CSV. A metric is added by adding one <see cref="ResultColumn"/> to <see cref="ResultColumns.All"/>
/// (and the property it reads to <see cref="CaseResult"/>); nothing else lists columns.
/// </remarks>
public sealed class ResultColumn
{
    /// <summary>A stable key (kebab-case), for tests and the HTML report.</summary>
    public required string Id { get; init; }

    /// <summary>The table header; null for a column that is only in results.csv.</summary>
    public string? Header { get; init; }

    /// <summary>What the column means, one sentence for the legends of report.md and report.html.</summary>
    public string? Legend { get; init; }

    /// <summary>The tables the column appears in.</summary>
    /// <value>Default <see cref="ColumnTables.None"/> (CSV only).</value>
    public ColumnTables Tables { get; init; }

    /// <summary>True for numbers: right-aligned in tables.</summary>
    /// <value>Default true.</value>
    public bool Numeric { get; init; } = true;

    /// <summary>True when a failed case still shows this cell (the strategy, its parameters, the seed's figure); others show a dash.</summary>
    /// <value>Default false.</value>
    public bool KeepsOnFailure { get; init; }

    /// <summary>The formatted cell of a case that ran (or of any case, when <see cref="KeepsOnFailure"/>), in its scenario.</summary>
    public Func<CaseResult, ScenarioResult, string> Cell { get; init; } = (_, _) => string.Empty;

    /// <summary>Whether the column is shown for a scenario at all (e.g. the database column only where there is a database).</summary>
    /// <value>Default: always.</value>
    public Func<ScenarioResult, bool> AppliesTo { get; init; } = _ => true;

    /// <summary>The raw values this column contributes to results.csv, in order.</summary>
    /// <value>Default none.</value>
    public IReadOnlyList<CsvField> Csv { get; init; } = [];

    /// <summary>True when the column is in <paramref name="table"/>.</summary>
    public bool IsIn(ColumnTables table) => (Tables & table) != 0;

    /// <inheritdoc/>
    public override string ToString() => Header ?? Id;
}
