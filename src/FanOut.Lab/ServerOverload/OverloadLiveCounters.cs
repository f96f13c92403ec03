using FanOut.Lab.Measurement;

namespace FanOut.Lab.ServerOverload;

/// <summary>What a load step did so far, for the lab's timeline: requests in flight, goodput and refusals; read lock-free every millisecond.</summary>
/// <param name="probe">The probe every request enters while it waits for its answer (the workload's, so the timeline's "in flight" is it).</param>
public sealed class OverloadLiveCounters(InFlightProbe probe)
{
    private long _good;
    private long _refused;

    /// <summary>Requests sent and not yet answered (nor given up on).</summary>
    public InFlightProbe Probe { get; } = probe ?? throw new ArgumentNullException(nameof(probe));

    /// <summary>Answers that were a 200 within the SLO, so far.</summary>
    public long Good => Interlocked.Read(ref _good);

    /// <summary>Refusals (503 or 429), so far.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>Zeroes the counts between runs (the probe is the runner's to reset).</summary>
    public void Reset()
    {
        Interlocked.Exchange(ref _good, 0);
        Interlocked.Exchange(ref _refused, 0);
    }

    /// <summary>Counts one answer: its status (0 when none came) and whether it came within the SLO.</summary>
    public void Count(int status, bool withinSlo)
    {
        if (status == 200 && withinSlo)
        {
            Interlocked.Increment(ref _good);
        }
        else if (status is 503 or 429)
        {
            Interlocked.Increment(ref _refused);
        }
    }
}
