using System.Diagnostics.CodeAnalysis;
using System.Globalization;

namespace FanOut.Downstream.Latency;

/// <summary>Parses the one-token SPEC syntax into a <see cref="LatencySpec"/>.</summary>
internal static class LatencySpecParser
{
    /// <summary>Parses <paramref name="spec"/>; on failure <paramref name="error"/> is one line naming the bad value and the valid forms.</summary>
    public static bool TryParse(
        string? spec,
        [NotNullWhen(true)] out LatencySpec? result,
        [NotNullWhen(false)] out string? error)
    {
        result = null;
        error = null;
        if (string.IsNullOrWhiteSpace(spec))
        {
            error = Fail(spec ?? "", "it is empty");
            return false;
        }

        var text = spec.Trim();
        var colon = text.IndexOf(':', StringComparison.Ordinal);
        if (colon < 0)
        {
            error = Fail(text, "expected KIND:ARGS");
            return false;
        }

        var kind = text[..colon];
        var args = text[(colon + 1)..];
        try
        {
            if (kind.Equals("fixed", StringComparison.OrdinalIgnoreCase))
            {
                if (TryNumber(args, out var ms))
                {
                    result = new FixedLatency(ms);
                }
                else
                {
                    error = Fail(text, $"'{args}' is not a number of milliseconds");
                }
            }
            else if (kind.Equals("uniform", StringComparison.OrdinalIgnoreCase))
            {
                // Negative numbers are invalid anyway, so the first '-' always separates MIN from MAX.
                var dash = args.IndexOf('-', StringComparison.Ordinal);
                if (dash > 0 && TryNumber(args[..dash], out var min) && TryNumber(args[(dash + 1)..], out var max))
                {
                    result = new UniformLatency(min, max);
                }
                else
                {
                    error = Fail(text, $"'{args}' is not MIN-MAX");
                }
            }
            else if (kind.Equals("lognormal", StringComparison.OrdinalIgnoreCase))
            {
                var comma = args.IndexOf(',', StringComparison.Ordinal);
                const string P99Prefix = "p99=";
                if (comma > 0
                    && TryNumber(args[..comma], out var median)
                    && args[(comma + 1)..].StartsWith(P99Prefix, StringComparison.OrdinalIgnoreCase)
                    && TryNumber(args[(comma + 1 + P99Prefix.Length)..], out var p99))
                {
                    result = new LogNormalLatency(median, p99);
                }
                else
                {
                    error = Fail(text, $"'{args}' is not MEDIAN,p99=P99");
                }
            }
            else
            {
                error = Fail(text, $"unknown kind '{kind}'");
            }
        }
        catch (ArgumentOutOfRangeException ex)
        {
            // The records' own range checks; keep their first line only so the message stays one line.
            error = Fail(text, FirstLine(ex.Message));
        }

        return result is not null;
    }

    private static bool TryNumber(string text, out double value)
        => double.TryParse(text, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out value);

    private static string FirstLine(string message)
    {
        var newline = message.IndexOfAny(['\r', '\n']);
        return (newline < 0 ? message : message[..newline]).TrimEnd();
    }

    private static string Fail(string spec, string reason)
        => $"Invalid latency spec '{spec}': {reason}. Valid forms: {LatencySpec.ValidForms}.";
}
