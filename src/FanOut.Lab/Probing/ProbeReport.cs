using FanOut.Lab.Results;

namespace FanOut.Lab.Probing;

/// <summary>Everything a probe found: the document written to probe.json and printed by <c>--json</c>.</summary>
/// <param name="Url">The URL probed.</param>
/// <param name="Machine">The machine the probe ran on (the client side).</param>
/// <param name="Levels">Every level measured, in ascending concurrency.</param>
/// <param name="Usl">The Universal Scalability Law fitted to ok/s against concurrency; null when nothing was ok.</param>
/// <param name="Recommendation">The limit to write, why, and the code.</param>
/// <param name="RequestsSent">Requests sent in all, the reachability check and the rate check included.</param>
/// <param name="Seconds">Seconds the probe took.</param>
/// <param name="EndedBy">How the probe ended: <c>measured</c>, <c>max-requests</c>, <c>duration</c> or <c>interrupted</c>.</param>
public sealed record ProbeReport(
    string Url,
    MachineInfo Machine,
    IReadOnlyList<LevelResult> Levels,
    UslModel? Usl,
    Recommendation Recommendation,
    long RequestsSent,
    double Seconds,
    string EndedBy);
