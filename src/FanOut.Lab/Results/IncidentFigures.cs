using System.Globalization;

using FanOut.Lab.Results.Columns;

namespace FanOut.Lab.Results;

/// <summary>The figures of an incident row (adaptive-incidents), read once for the table's columns and the verdict alike.</summary>
/// <remarks>An incident row carries <c>phase</c> and <c>bestFixed</c> parameters (the capacity in its judged window); its
/// baseline is the row of the same phase with a fixed limit (no moving limit) of exactly that capacity.</remarks>
public static class IncidentFigures
{
    /// <summary>The parameter naming an incident row's phase.</summary>
    public const string PhaseKey = "phase";

    /// <summary>The parameter holding the best fixed limit of the row's phase: its capacity.</summary>
    public const string BestFixedKey = "bestFixed";

    /// <summary>True for a row of an incident scenario.</summary>
    public static bool IsIncident(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return c.Io?.PhaseSuccessesPerSecond is not null;
    }

    /// <summary>The row's phase, or null.</summary>
    public static string? Phase(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return c.Parameters.TryGetValue(PhaseKey, out var phase) ? phase.ToString() : null;
    }

    /// <summary>The best fixed limit of the row's phase, or null.</summary>
    public static int? BestFixed(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        return c.Parameters.TryGetValue(BestFixedKey, out var value) && int.TryParse(value.ToString(), NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) ? n : null;
    }

    /// <summary>The row its goodput is read against: the same phase's fixed limit of its capacity; null when that did not run.</summary>
    public static CaseResult? Baseline(CaseResult c, ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(c);
        ArgumentNullException.ThrowIfNull(scenario);
        var phase = Phase(c);
        var best = BestFixed(c);
        return phase is null || best is null
            ? null
            : scenario.Cases.FirstOrDefault(o => o.Succeeded && IsIncident(o) && Phase(o) == phase && o.LimitFinal is null && o.Concurrency == best);
    }

    /// <summary>The row's goodput in its phase over its baseline's; null when either is missing or the baseline made none.</summary>
    public static double? GoodputRatio(CaseResult c, ScenarioResult scenario)
    {
        var baseline = Baseline(c, scenario);
        return c.Io?.PhaseSuccessesPerSecond is { } own && baseline?.Io?.PhaseSuccessesPerSecond is { } best && best > 0 ? own / best : null;
    }

    /// <summary>The server's 429s over its answers after the limit settled; null when it never settled or nothing was answered.</summary>
    public static double? RejectedShareAfterSettling(IoResult io)
    {
        ArgumentNullException.ThrowIfNull(io);
        return io.Rejected429AfterConvergence is { } rejected && io.CallsAfterConvergence is { } calls && calls > 0 ? rejected / calls : null;
    }

    /// <summary><c>120 ms</c>, or <c>never</c> when the limit did not stay within the band to the window's end.</summary>
    public static string SettleText(IoResult io)
    {
        ArgumentNullException.ThrowIfNull(io);
        return io.ConvergenceMs is { } ms ? string.Create(CultureInfo.InvariantCulture, $"{ms:N0} ms") : "never";
    }

    /// <summary><c>1.2%</c>, or <c>-</c>.</summary>
    public static string ShareText(double? share) => share is { } s ? s.ToString("0.0%", CultureInfo.InvariantCulture) : "-";

    /// <summary><c>1,234 (0.95x)</c>: the phase's goodput and its ratio to the baseline's.</summary>
    public static string GoodputText(CaseResult c, ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(c);
        if (c.Io?.PhaseSuccessesPerSecond is not { } own)
        {
            return "-";
        }

        var text = own.ToString("N0", CultureInfo.InvariantCulture);
        return GoodputRatio(c, scenario) is { } ratio ? $"{text} ({RatioText(ratio)})" : text;
    }

    /// <summary><c>0.95x</c>.</summary>
    public static string RatioText(double ratio) => CellText.Ratio(ratio) + "x";
}
