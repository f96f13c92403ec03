using System.Globalization;

namespace FanOut.Lab.Results.Columns;

/// <summary>How numbers read in every table: times with BenchmarkDotNet's units, bytes, counts.</summary>
public static class CellText
{
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

    /// <summary>A count, always a whole number: the lab's counts are one run's (the median run's, see CaseResultBuilder), and a
    /// count read from an older results file that holds a mean is rounded rather than shown as "41.7 items".</summary>
    public static string Count(double value) => Math.Round(value, MidpointRounding.AwayFromZero).ToString("N0", CultureInfo.InvariantCulture);

    /// <summary>Start/peak/end of a sampled count: <c>3/380/380</c>.</summary>
    public static string StartPeakEnd(double start, double peak, double end) => $"{Count(start)}/{Count(peak)}/{Count(end)}";

    /// <summary>A ratio with two decimals, or NA when it is not a number.</summary>
    public static string Ratio(double value) => double.IsFinite(value) ? value.ToString("0.00", CultureInfo.InvariantCulture) : "NA";
}
