using FanOut.Lab.Results;

namespace FanOut.Lab.Probing;

/// <summary>Everything a probe found: the document written to probe.json and printed by <c>--json</c>.</summary>
/// <param name="Url">The URL probed.</param>
/// <param name="Machine">The machine the probe ran on (the client side).</param>
/// <param name="Levels">Every level measured, in ascending concurrency.</param>
/// <param name="Usl">The Universal Scalability Law fitted to ok/s against concurrency; null when nothing was ok.</param>
/// <param name="UslBand">The fit's 95% bootstrap intervals and the peak band in words; null when too few levels.</param>
/// <param name="Capacity">What the capacity search found; null when it did not run (a rate limit, or stopped first).</param>
/// <param name="OpenLoop">The open-loop check of the recommendation; null when there was nothing to check.</param>
/// <param name="Recommendation">The limit to write, how sure, why, and (only when final) the code.</param>
/// <param name="MaxRequests">The request budget (<c>--max-requests</c>); null when unlimited.</param>
/// <param name="RequestsSent">Requests sent in all, the reachability check, rate check and open-loop check included.</param>
/// <param name="Seconds">Seconds the probe took.</param>
/// <param name="EndedBy">How the probe ended: <c>measured</c>, <c>max-requests</c>, <c>max-rate</c>, <c>duration</c> or <c>interrupted</c>.</param>
public sealed record ProbeReport(
    string Url,
    MachineInfo Machine,
    IReadOnlyList<LevelResult> Levels,
    UslModel? Usl,
    UslBand? UslBand,
    CapacityFinding? Capacity,
    OpenLoopResult? OpenLoop,
    Recommendation Recommendation,
    long? MaxRequests,
    long RequestsSent,
    double Seconds,
    string EndedBy);
