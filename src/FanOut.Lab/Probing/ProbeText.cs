using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>How the probe writes its figures in lines and tables: one definition for the engine's reasons and the CLI.</summary>
public static class ProbeText
{
    /// <summary>Milliseconds: one decimal under 10, whole above; "n/a" for none.</summary>
    public static string Ms(double? value) => value is { } v ? v.ToString(v < 10 ? "0.0" : "N0", CultureInfo.InvariantCulture) + " ms" : "n/a";

    /// <summary>A rate: one decimal under 10, whole (with thousands separators) above.</summary>
    public static string Rate(double value) => value.ToString(value < 10 ? "0.0" : "N0", CultureInfo.InvariantCulture);
}
