namespace FanOut.Lab.Probing;

/// <summary>Whether the server's rejections follow the request rate rather than the concurrency, and the rate it allows.</summary>
/// <param name="IsRate">True when the evidence says rate.</param>
/// <param name="SustainedOkPerSecond">Ok answers per second the server let through while rejecting, after a bucket's burst (<see cref="LevelResult.OkPerSecondWhileRejecting"/>).</param>
/// <param name="Evidence">What showed it, in a few words.</param>
public sealed record RateVerdict(bool IsRate, double SustainedOkPerSecond, string Evidence)
{
    /// <summary>No rejections, or nothing pointing at a rate.</summary>
    public static RateVerdict None { get; } = new(false, 0, string.Empty);
}
