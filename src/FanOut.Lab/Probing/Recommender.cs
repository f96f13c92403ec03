using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>Turns the measured levels into the limit to write, its one-line reason, and the code.</summary>
/// <remarks>
/// When the Little's-law knee (N* = X_max x R0, see <see cref="Prober"/>) was measured, is clean and reached at least
/// <see cref="NearBest"/> of the best clean ok/s, it is the recommendation: it rests on the best ok/s and the lowest
/// latency of all levels together, so one noisy level moves it little. Otherwise, among the clean levels (no failure of any kind, p99 within the objective) whose ok/s is at least
/// <see cref="NearBest"/> of the best clean ok/s, the recommendation is the one with the most <b>power</b>, ok/s divided
/// by mean latency (Kleinrock): below the knee latency is flat and power grows with N; past it, by Little's law, latency
/// grows as N / X_max and power falls as 1/N. So power peaks at the knee, sharply enough that the noise of a shared
/// machine rarely moves it, while the ok/s floor keeps a gently saturating server from being held to half its throughput. When the server limits a rate, the rate recommended is <see cref="RateHeadroom"/> of the ok/s
/// it sustained while rejecting, enforced beside the concurrency limit.
/// </remarks>
public static class Recommender
{
    /// <summary>The share of the best clean ok/s that counts as "close to the best".</summary>
    public const double NearBest = 0.8;

    /// <summary>The share of the server's sustained rate to recommend, so clock drift and bursts stay under its limit.</summary>
    public const double RateHeadroom = 0.9;

    /// <summary>The recommendation for <paramref name="levels"/> judged by <paramref name="verdicts"/>.</summary>
    /// <param name="levels">The levels measured.</param>
    /// <param name="verdicts">What the level-stopping rule made of each, same order.</param>
    /// <param name="rate">Whether the server limits a rate.</param>
    /// <param name="usl">The USL fit, quoted in the reason.</param>
    /// <param name="knee">The Little's-law knee the probe computed, or null.</param>
    public static Recommendation Recommend(IReadOnlyList<LevelResult> levels, IReadOnlyList<LevelVerdict> verdicts, RateVerdict rate, UslModel? usl, int? knee = null)
    {
        ArgumentNullException.ThrowIfNull(levels);
        ArgumentNullException.ThrowIfNull(verdicts);
        ArgumentNullException.ThrowIfNull(rate);
        var clean = levels.Where((_, i) => verdicts[i].Clean).OrderBy(l => l.Concurrency).ToArray();
        double? ratePerSecond = rate.IsRate ? Math.Round(rate.SustainedOkPerSecond * RateHeadroom, 1) : null;
        if (clean.Length == 0)
        {
            var first = levels.OrderBy(l => l.Concurrency).FirstOrDefault();
            var why = first is null ? "nothing was measured" : $"even {first.Concurrency} at a time failed or missed the objective ({Describe(first)})";
            var reason = ratePerSecond is { } r
                ? $"the server limits the rate ({rate.Evidence}): send at most {Rate(r)}/s, one at a time; {why}"
                : $"no level was clean: {why}; fix the endpoint before choosing a limit";
            return new Recommendation(1, ratePerSecond, reason, first?.OkPerSecond ?? 0, first?.LatencyP99Ms, RecommendedCode.For(1, ratePerSecond));
        }

        var best = clean.MaxBy(l => l.OkPerSecond)!;
        var nearBest = clean.Where(l => l.OkPerSecond >= NearBest * best.OkPerSecond).ToArray();
        var atKnee = nearBest.FirstOrDefault(l => l.Concurrency == knee);
        var chosen = atKnee ?? nearBest.MaxBy(Power)!;
        var next = levels.Where(l => l.Concurrency > chosen.Concurrency).OrderBy(l => l.Concurrency).FirstOrDefault();
        var share = (100 * chosen.OkPerSecond / best.OkPerSecond).ToString("0", CultureInfo.InvariantCulture) + "%";
        var above = next is null ? string.Empty
            : next.Rejections > 0 || next.FailureCount > 0 ? $"; {next.Concurrency} was rejected or failed"
            : $"; {next.Concurrency} added latency, not throughput ({Rate(next.OkPerSecond)} ok/s, p99 {ProbeText.Ms(next.LatencyP99Ms)})";
        var model = usl?.PeakConcurrency is { } peak && usl.R2 > 0 ? $"; USL peak at {peak.ToString("0", CultureInfo.InvariantCulture)}" : string.Empty;
        var head = ratePerSecond is { } limitRate
            ? $"the server limits the rate ({rate.Evidence}): at most {Rate(limitRate)}/s, and {chosen.Concurrency} at once"
            : $"{chosen.Concurrency} at once";
        var kneeNote = atKnee is null ? string.Empty : " (the Little's-law knee)";
        var line = $"{head}{kneeNote} gave {Rate(chosen.OkPerSecond)} ok/s ({share} of the best clean level, {best.Concurrency}) with zero rejections and p99 {ProbeText.Ms(chosen.LatencyP99Ms)}{above}{model}";
        return new Recommendation(chosen.Concurrency, ratePerSecond, line, chosen.OkPerSecond, chosen.LatencyP99Ms, RecommendedCode.For(chosen.Concurrency, ratePerSecond));
    }

    /// <summary>Ok/s per millisecond of mean latency; a level without latencies has none.</summary>
    private static double Power(LevelResult level) => level.LatencyMeanMs is > 0 and { } mean ? level.OkPerSecond / mean : 0;

    private static string Describe(LevelResult level) =>
        $"{level.FailureCount.ToString("N0", CultureInfo.InvariantCulture)} of {level.Requests.ToString("N0", CultureInfo.InvariantCulture)} failed, p99 {ProbeText.Ms(level.LatencyP99Ms)}";

    private static string Rate(double value) => ProbeText.Rate(value);
}
