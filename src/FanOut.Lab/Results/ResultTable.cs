using System.Globalization;

namespace FanOut.Lab.Results;

/// <summary>A scenario's cases as text cells, in the style of BenchmarkDotNet's summary table; the console and report.md both draw it.</summary>
public static class ResultTable
{
    /// <summary>The column headers; <see cref="RightAligned"/> says which are numbers.</summary>
    public static IReadOnlyList<string> Headers { get; } =
    [
        "Strategy", "Parameters", "1st run", "Mean", "Error", "StdDev", "Median", "Ideal", "Eff.", "In flight",
        "Pool thr (s/p/e)", "OS thr (s/p/e)", "Queue", "Work items", "Allocated", "Gen0", "CPU", "Seed said",
    ];

    /// <summary>True for the columns that hold numbers.</summary>
    public static bool RightAligned(int column) => column is >= 2 and <= 16;

    /// <summary>One row of cells per case.</summary>
    public static IReadOnlyList<IReadOnlyList<string>> Rows(ScenarioResult scenario)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        return scenario.Cases.Select(Row).ToArray();
    }

    /// <summary>The cells of one case.</summary>
    public static IReadOnlyList<string> Row(CaseResult c)
    {
        ArgumentNullException.ThrowIfNull(c);
        var parameters = ParametersText(c.Parameters);
        if (!c.Succeeded)
        {
            var blank = Enumerable.Repeat("-", Headers.Count - 4);
            return [c.Strategy, parameters, .. blank, $"FAILED: {c.Error}", c.SeedSays ?? string.Empty];
        }

        return
        [
            c.Strategy,
            parameters,
            Time(c.FirstRunMs),
            Time(c.MeanMs),
            c.ErrorMs is { } e ? Time(e) : "NA",
            Time(c.StdDevMs),
            Time(c.MedianMs),
            Time(c.IdealMs),
            double.IsFinite(c.Efficiency) ? c.Efficiency.ToString("0.00", CultureInfo.InvariantCulture) : "NA",
            Count(c.PeakInFlight),
            $"{Count(c.ThreadPoolThreadsStart)}/{Count(c.ThreadPoolThreadsPeak)}/{Count(c.ThreadPoolThreadsEnd)}",
            $"{Count(c.ProcessThreadsStart)}/{Count(c.ProcessThreadsPeak)}/{Count(c.ProcessThreadsEnd)}",
            Count(c.PeakQueueLength),
            Count(c.CompletedWorkItems),
            Bytes(c.AllocatedBytes),
            c.Gen0.ToString("0.##", CultureInfo.InvariantCulture),
            Time(c.CpuTimeMs),
            c.SeedSays ?? string.Empty,
        ];
    }

    /// <summary><c>N=500 delayMs=20</c>: the item count first, then the workload's parameters.</summary>
    public static string ParametersText(IReadOnlyDictionary<string, object> parameters)
    {
        ArgumentNullException.ThrowIfNull(parameters);
        return string.Join(' ', parameters.Select(p => p.Key == "itemCount" ? $"N={p.Value}" : $"{p.Key}={p.Value}"));
    }

    /// <summary>Milliseconds with units chosen like BenchmarkDotNet's: us below 1 ms, s above 10 s.</summary>
    public static string Time(double ms) => ms switch
    {
        < 1 => string.Create(CultureInfo.InvariantCulture, $"{ms * 1000:N1} us"),
        < 10_000 => string.Create(CultureInfo.InvariantCulture, $"{ms:N2} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{ms / 1000:N3} s"),
    };

    /// <summary>Bytes as B, KB or MB.</summary>
    public static string Bytes(double bytes) => bytes switch
    {
        < 1024 => string.Create(CultureInfo.InvariantCulture, $"{bytes:N0} B"),
        < 1024 * 1024 => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1024:N1} KB"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{bytes / 1024 / 1024:N1} MB"),
    };

    private static string Count(double value) =>
        value == Math.Round(value) ? value.ToString("N0", CultureInfo.InvariantCulture) : value.ToString("N1", CultureInfo.InvariantCulture);
}
