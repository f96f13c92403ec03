namespace FanOut.Lab.Measurement;

/// <summary>How late the heartbeats of one run ran: thread-pool work items queued every 10 ms, and a 10 ms timer.</summary>
/// <param name="PoolBeats">Pool heartbeats recorded.</param>
/// <param name="PoolP50Ms">Median lateness of a pool heartbeat, ms.</param>
/// <param name="PoolP99Ms">99th-percentile lateness of a pool heartbeat, ms.</param>
/// <param name="PoolMaxMs">Largest lateness of a pool heartbeat, ms.</param>
/// <param name="TimerBeats">Timer callbacks recorded.</param>
/// <param name="TimerP50Ms">Median lateness of the timer callback, ms.</param>
/// <param name="TimerP99Ms">99th-percentile lateness of the timer callback, ms.</param>
/// <param name="TimerMaxMs">Largest lateness of the timer callback, ms.</param>
public sealed record HeartbeatRunMetrics(
    int PoolBeats, double PoolP50Ms, double PoolP99Ms, double PoolMaxMs, int TimerBeats, double TimerP50Ms, double TimerP99Ms, double TimerMaxMs);
