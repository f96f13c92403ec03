namespace FanOut.Lab.Results;

/// <summary>One load step of a server under open-loop load: <c>io.loadSteps[]</c> in results.json (server-overload).</summary>
/// <param name="LoadFactor">Offered load as a multiple of the backend's capacity.</param>
/// <param name="OfferedPerSecond">Arrivals per second.</param>
/// <param name="Sent">Requests counted (sent after the step's warm-up).</param>
/// <param name="GoodputPerSecond">200s within the SLO per second.</param>
/// <param name="P50Ms">Median latency of admitted requests (200s) from their intended start; null when none.</param>
/// <param name="P99Ms">99th-percentile latency of admitted requests; null when none.</param>
/// <param name="RefusedShare">Share refused (503 or 429).</param>
/// <param name="FailedShare">Share with no answer within the client's timeout, or failed.</param>
/// <param name="CriticalSuccess">Share of the critical requests (every fifth) answered 200.</param>
/// <param name="SheddableSuccess">Share of the other requests answered 200.</param>
/// <param name="MeanLimit">The adaptive limit's mean over the counted stretch (sampled every 100 ms); null without one.</param>
public sealed record LoadStepResult(
    double LoadFactor,
    double OfferedPerSecond,
    int Sent,
    double GoodputPerSecond,
    double? P50Ms,
    double? P99Ms,
    double RefusedShare,
    double FailedShare,
    double CriticalSuccess,
    double SheddableSuccess,
    double? MeanLimit);
