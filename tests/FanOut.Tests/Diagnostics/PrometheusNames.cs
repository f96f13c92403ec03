using System.Text;
using System.Text.RegularExpressions;

using OpenTelemetry.Metrics;

namespace FanOut.Tests.Diagnostics;

/// <summary>
/// The names OpenTelemetry .NET's Prometheus exporter gives an instrument, as docs/opentelemetry.md documents them (after the
/// exporter's <c>PrometheusMetric</c>): every character that is not a letter, a digit or <c>:</c> becomes <c>_</c> (runs
/// collapse to one), a unit's <c>{annotation}</c> is dropped and <c>s</c> becomes the suffix <c>_seconds</c>, a monotonic
/// sum (a counter) gets <c>_total</c>, and a histogram is read as <c>_bucket</c>, <c>_sum</c> and <c>_count</c> series.
/// </summary>
internal static partial class PrometheusNames
{
    /// <summary>The series names a query may use for the instrument <paramref name="name"/>.</summary>
    public static IReadOnlyList<string> Of(string name, string? unit, MetricType type)
    {
        var prometheus = Sanitize(name);
        var suffix = Unit(unit);
        if (suffix.Length > 0 && !prometheus.EndsWith(suffix, StringComparison.Ordinal))
        {
            prometheus += "_" + suffix;
        }

        if (type is MetricType.LongSum or MetricType.DoubleSum && !prometheus.EndsWith("_total", StringComparison.Ordinal))
        {
            prometheus += "_total";
        }

        return type is MetricType.Histogram or MetricType.ExponentialHistogram
            ? [prometheus + "_bucket", prometheus + "_sum", prometheus + "_count"]
            : [prometheus];
    }

    /// <summary>The metric names a PromQL expression selects: every identifier outside label matchers and label lists.</summary>
    public static IReadOnlyList<string> UsedBy(string expr)
    {
        var withoutLabels = LabelMatchers().Replace(expr, " ");
        withoutLabels = LabelLists().Replace(withoutLabels, " ");
        return [.. Identifiers().Matches(withoutLabels).Select(m => m.Value).Where(id => !PromQlWords.Contains(id)).Distinct()];
    }

    private static readonly HashSet<string> PromQlWords =
    [
        "sum", "min", "max", "avg", "count", "rate", "irate", "increase", "histogram_quantile", "by", "without", "on", "ignoring",
        "group_left", "group_right", "and", "or", "unless", "clamp_min", "clamp_max", "abs", "delta", "deriv", "topk", "bottomk",
        "label_replace", "vector", "scalar", "time", "offset", "bool",
    ];

    private static string Sanitize(string name)
    {
        var result = new StringBuilder(name.Length);
        foreach (var c in name)
        {
            if (char.IsLetterOrDigit(c) || c == ':')
            {
                result.Append(c);
            }
            else if (result.Length == 0 || result[^1] != '_')
            {
                result.Append('_');
            }
        }

        return result.ToString();
    }

    private static string Unit(string? unit) => Annotations().Replace(unit ?? "", "") switch
    {
        "s" => "seconds",
        "ms" => "milliseconds",
        "By" => "bytes",
        "1" => "",
        var other => other,
    };

    [GeneratedRegex(@"\{[^}]*\}")]
    private static partial Regex Annotations();

    [GeneratedRegex(@"\{[^}]*\}")]
    private static partial Regex LabelMatchers();

    [GeneratedRegex(@"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")]
    private static partial Regex LabelLists();

    [GeneratedRegex(@"(?<![\w$.])[a-zA-Z_:][a-zA-Z0-9_:]*(?![\w.])")]
    private static partial Regex Identifiers();
}
