namespace FanOut.Lab.Results.Columns;

/// <summary>The tables a <see cref="ResultColumn"/> appears in; CSV-only columns appear in none.</summary>
[Flags]
public enum ColumnTables
{
    /// <summary>Only in results.csv.</summary>
    None = 0,

    /// <summary>The seed scenarios' full table (<c>--wide</c>, report.md, report.html).</summary>
    SeedWide = 1,

    /// <summary>The seed scenarios' default console table.</summary>
    SeedCompact = 2,

    /// <summary>The real-I/O scenarios' full table.</summary>
    IoWide = 4,

    /// <summary>The real-I/O scenarios' default console table.</summary>
    IoCompact = 8,

    /// <summary>The full table of the error and cancellation scenarios (seed000-errors, seed000-cancel): what the items did and what the caller got.</summary>
    Outcome = 16,

    /// <summary>The error and cancellation scenarios' default console table: the counts and what the caller got.</summary>
    OutcomeCompact = 32,

    /// <summary>Every seed table.</summary>
    Seed = SeedWide | SeedCompact,

    /// <summary>Every real-I/O table.</summary>
    Io = IoWide | IoCompact,

    /// <summary>Every full table.</summary>
    Wide = SeedWide | IoWide,

    /// <summary>Every outcome table.</summary>
    Outcomes = Outcome | OutcomeCompact,

    /// <summary>Every table.</summary>
    All = Seed | Io | Outcomes,
}
