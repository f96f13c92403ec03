namespace FanOut.Lab.Probing;

/// <summary>The open-loop check: constant-arrival-rate load at the recommended limit, <c>openLoop</c> in probe.json.</summary>
/// <remarks>Arrivals are scheduled at fixed intervals whatever the answers do (open loop, as real traffic arrives); a
/// request that waits for one of the <see cref="Limit"/> slots waits on the client. Latency is measured from each
/// request's <b>intended</b> start, so time spent waiting behind a slow answer counts (coordinated omission corrected,
/// as wrk2 does), and beside it from the actual send (what a closed loop reports).</remarks>
/// <param name="ArrivalsPerSecond">The arrival rate offered.</param>
/// <param name="Limit">At most this many in flight (the recommended limit).</param>
/// <param name="Scheduled">Arrivals scheduled.</param>
/// <param name="Sent">Requests sent (fewer than scheduled when the budget ran out or it was interrupted).</param>
/// <param name="Ok">Answers with a status below 400.</param>
/// <param name="Failures">Failures by kind, as in a level.</param>
/// <param name="LatencyP50Ms">Median latency from the intended start.</param>
/// <param name="LatencyP99Ms">p99 latency from the intended start (coordinated omission corrected).</param>
/// <param name="ServiceP50Ms">Median latency from the actual send.</param>
/// <param name="ServiceP99Ms">p99 latency from the actual send.</param>
/// <param name="ClosedLoopP99Ms">The closed-loop p99 measured at the same limit, for comparison.</param>
/// <param name="BacklogEarly">Mean arrivals waiting for a slot over the first third of the arrivals.</param>
/// <param name="BacklogLate">Mean arrivals waiting for a slot over the last third: the queue grew when this exceeds
/// <paramref name="BacklogEarly"/> by more than max(2, a quarter of the limit).</param>
/// <param name="BacklogAtEnd">Arrivals still waiting for a slot when the last one was due.</param>
/// <param name="Seconds">Seconds from the first arrival to the last answer.</param>
/// <param name="ScheduleLateMs">The most any arrival was released after its intended start: a few milliseconds on a
/// quiet client; far more when the client machine was too busy to keep its schedule, and sent in bursts.</param>
/// <param name="Holds">Nothing rejected or failed, every arrival sent, and the backlog did not grow.</param>
/// <param name="Verdict">The check in one line.</param>
public sealed record OpenLoopResult(
    double ArrivalsPerSecond,
    int Limit,
    long Scheduled,
    long Sent,
    long Ok,
    IReadOnlyDictionary<string, long> Failures,
    double? LatencyP50Ms,
    double? LatencyP99Ms,
    double? ServiceP50Ms,
    double? ServiceP99Ms,
    double? ClosedLoopP99Ms,
    double BacklogEarly,
    double BacklogLate,
    long BacklogAtEnd,
    double Seconds,
    double ScheduleLateMs,
    bool Holds,
    string Verdict);
