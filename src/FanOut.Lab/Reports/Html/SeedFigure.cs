using System.Globalization;
using System.Text.RegularExpressions;

namespace FanOut.Lab.Reports.Html;

/// <summary>Reads the time out of a seed's published figure (<c>~640 ms, 16 in flight</c> is 640 ms), to mark it beside ours.</summary>
public static partial class SeedFigure
{
    /// <summary>Milliseconds, or null when the text holds no time.</summary>
    public static double? Milliseconds(string? seedSays)
    {
        if (seedSays is null || TimePattern().Match(seedSays) is not { Success: true } match)
        {
            return null;
        }

        var value = double.Parse(match.Groups["value"].Value.Replace(",", string.Empty, StringComparison.Ordinal), CultureInfo.InvariantCulture);
        return match.Groups["unit"].Value switch
        {
            "s" => value * 1000,
            "us" or "µs" => value / 1000,
            _ => value,
        };
    }

    [GeneratedRegex(@"(?<value>\d[\d,]*(\.\d+)?)\s*(?<unit>ms|us|µs|s)\b")]
    private static partial Regex TimePattern();
}
