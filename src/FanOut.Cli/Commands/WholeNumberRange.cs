using System.Globalization;

namespace FanOut.Cli.Commands;

/// <summary>The one-line error for a whole-number option outside its range, said plainly: which bound it broke, then an example.</summary>
internal static class WholeNumberRange
{
    /// <summary>Null when <paramref name="value"/> is absent or a whole number in [<paramref name="min"/>, <paramref name="max"/>];
    /// else "--capacity -1 is too small: it must be at least 1 (and at most 10000), e.g. --capacity 64."</summary>
    /// <param name="name">The option, e.g. <c>--capacity</c>.</param>
    /// <param name="value">The parsed value, or null when the option was not given.</param>
    /// <param name="min">The smallest allowed value.</param>
    /// <param name="max">The largest allowed value; <see cref="long.MaxValue"/> or more for no upper bound.</param>
    public static string? Check(string name, double? value, double min, double max)
    {
        if (value is not { } v)
        {
            return null;
        }

        var bounded = max < long.MaxValue;
        var example = $"e.g. {name} {Text(Math.Clamp(64, min, max))}";
        if (!double.IsFinite(v) || v != Math.Floor(v))
        {
            return $"{name} {Text(v)} is not a whole number: use a whole number {(bounded ? $"from {Text(min)} to {Text(max)}" : $"of at least {Text(min)}")}, {example}.";
        }

        if (v < min)
        {
            return $"{name} {Text(v)} is too small: it must be at least {Text(min)}{(bounded ? $" (and at most {Text(max)})" : string.Empty)}, {example}.";
        }

        return v > max
            ? $"{name} {Text(v)} is too large: it must be at most {Text(max)} (and at least {Text(min)}), {example}."
            : null;
    }

    private static string Text(double value) => value.ToString(CultureInfo.InvariantCulture);
}
