namespace FanOut.Lab.Probing;

/// <summary>The Universal Scalability Law fitted to throughput against concurrency: <c>usl</c> in probe.json.</summary>
/// <remarks>X(N) = lambda N / (1 + sigma (N - 1) + kappa N (N - 1)) (Gunther). Sigma is contention (the serial share),
/// kappa coherency (the cost of in-flight work coordinating), lambda the throughput of one alone.</remarks>
/// <param name="Sigma">Contention, 0 or more.</param>
/// <param name="Kappa">Coherency, 0 or more.</param>
/// <param name="Lambda">Requests per second at concurrency 1.</param>
/// <param name="PeakConcurrency">Where X(N) peaks, sqrt((1 - sigma) / kappa); null when it never turns down (kappa 0).</param>
/// <param name="R2">Fit quality: 1 - residual / total sum of squares of throughput; 1 is a perfect fit.</param>
public sealed record UslModel(double Sigma, double Kappa, double Lambda, double? PeakConcurrency, double R2)
{
    /// <summary>The modelled throughput at concurrency <paramref name="n"/>.</summary>
    public double Throughput(double n) => Lambda * n / (1 + (Sigma * (n - 1)) + (Kappa * n * (n - 1)));
}
