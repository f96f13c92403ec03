using System.Diagnostics;

namespace FanOut.Downstream.Stats;

/// <summary>The server's counters: every request thread updates them, <c>/stats</c> reads them, <c>/stats/reset</c> zeroes them.</summary>
/// <remarks>
/// One short lock rather than separate Interlocked counters: a reset must zero every counter at one
/// instant and a snapshot must be consistent (requestsServed equal to the histogram's count, peak at
/// least in-flight), which independent atomics cannot give. The cost is two uncontended lock
/// acquisitions per served request (tens of nanoseconds), noise next to millisecond latencies.
/// Nothing but arithmetic runs under the lock.
/// </remarks>
internal sealed class ServerCounters
{
    private readonly Lock _lock = new();
    private readonly LatencyHistogram _latency = new();
    private int _inFlight;
    private int _peakInFlight;
    private int _atGate;
    private int _peakAtGate;
    private long _served;
    private long _cancelled;
    private long _rejectedCapacity;
    private long _rejectedRateLimit;
    private long _rejectedStorm;
    private long _rejectedNotLoopback;

    /// <summary>Requests being served right now; read without the lock, for samplers that must not allocate or block.</summary>
    public int InFlight => Volatile.Read(ref _inFlight);

    /// <summary>
    /// A request reached the slots and the queue (past the storm and the rate limit): it is served, waits, or is turned away
    /// there, and it leaves them with <see cref="OnServeEnded"/>, <see cref="OnCancelledWhileQueued"/> or <see cref="OnRejectedCapacity"/>.
    /// </summary>
    public void OnArrivedAtGate()
    {
        lock (_lock)
        {
            _atGate++;
            _peakAtGate = Math.Max(_peakAtGate, _atGate);
            AssertInvariants();
        }
    }

    /// <summary>A request got a capacity slot and starts its simulated work.</summary>
    /// <remarks>Call after the slot is acquired, so in-flight never exceeds the capacity.</remarks>
    public void OnServeStarted()
    {
        lock (_lock)
        {
            AssertInvariants();
            _inFlight++;
            _peakInFlight = Math.Max(_peakInFlight, _inFlight);
            AssertInvariants();
        }
    }

    /// <summary>A request that held a slot is done: served (its latency recorded) or cancelled.</summary>
    /// <remarks>Call before the slot is released: otherwise the next request could start first and
    /// in-flight would briefly read capacity + 1.</remarks>
    public void OnServeEnded(bool served, long latencyMicroseconds)
    {
        lock (_lock)
        {
            AssertInvariants();
            _inFlight--;
            _atGate--;
            if (served)
            {
                _served++;
                _latency.Record(latencyMicroseconds);
            }
            else
            {
                _cancelled++;
            }

            AssertInvariants();
        }
    }

    /// <summary>A request gave up (client cancel or crash) while it waited in the queue.</summary>
    public void OnCancelledWhileQueued()
    {
        lock (_lock)
        {
            _cancelled++;
            _atGate--;
            AssertInvariants();
        }
    }

    /// <summary>A request was answered 429 because every slot and queue place was taken.</summary>
    public void OnRejectedCapacity()
    {
        lock (_lock)
        {
            _rejectedCapacity++;
            _atGate--;
            AssertInvariants();
        }
    }

    /// <summary>A request was answered 429 because the token bucket was empty.</summary>
    public void OnRejectedRateLimit()
    {
        lock (_lock)
        {
            _rejectedRateLimit++;
        }
    }

    /// <summary>A request was answered 429 because a Retry-After storm was under way.</summary>
    public void OnRejectedStorm()
    {
        lock (_lock)
        {
            _rejectedStorm++;
        }
    }

    /// <summary>A request came from a non-loopback address and was answered 403.</summary>
    public void OnRejectedNotLoopback()
    {
        lock (_lock)
        {
            _rejectedNotLoopback++;
        }
    }

    /// <summary>Zeroes the counters and the latency histogram.</summary>
    /// <remarks>In-flight is current state, not a counter, so it survives; the peak restarts from it.
    /// A request in flight across the reset is counted in the new period when it ends.</remarks>
    public void Reset()
    {
        lock (_lock)
        {
            AssertInvariants();
            _peakInFlight = _inFlight;
            _peakAtGate = _atGate;
            _served = 0;
            _cancelled = 0;
            _rejectedCapacity = 0;
            _rejectedRateLimit = 0;
            _rejectedStorm = 0;
            _rejectedNotLoopback = 0;
            _latency.Clear();
            AssertInvariants();
        }
    }

    /// <summary>A consistent copy of every counter, beside the server's settings now (<paramref name="state"/>, read by the caller).</summary>
    public DownstreamStats Snapshot(DownstreamState state)
    {
        lock (_lock)
        {
            AssertInvariants();
            return new DownstreamStats
            {
                RequestsServed = _served,
                RequestsCancelled = _cancelled,
                Rejected429 = _rejectedCapacity + _rejectedRateLimit + _rejectedStorm,
                Rejected429Capacity = _rejectedCapacity,
                Rejected429RateLimit = _rejectedRateLimit,
                Rejected429Storm = _rejectedStorm,
                RejectedNotLoopback = _rejectedNotLoopback,
                InFlight = _inFlight,
                Queued = state.Queued,
                PeakConcurrentServed = _peakInFlight,
                PeakAtGate = _peakAtGate,
                Capacity = state.Capacity,
                QueueLimit = state.QueueLimit,
                Latency = state.Latency,
                Phase = state.Phase,
                StormSecondsLeft = state.StormSecondsLeft,
                LatencyP50Ms = ToMilliseconds(_latency.ValueAtPercentile(50)),
                LatencyP95Ms = ToMilliseconds(_latency.ValueAtPercentile(95)),
                LatencyP99Ms = ToMilliseconds(_latency.ValueAtPercentile(99)),
                LatencyMaxMs = ToMilliseconds(_latency.Max),
            };
        }
    }

    private static double ToMilliseconds(long microseconds) => microseconds / 1000.0;

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "Counters are touched under the lock.");
        // The capacity may have been lowered under requests being served: only the largest one bounds them.
        Debug.Assert(_inFlight >= 0 && _inFlight <= DownstreamOptions.MaxCapacity, "In-flight is within [0, the largest capacity].");
        Debug.Assert(_peakInFlight >= _inFlight, "The peak is at least in-flight.");
        Debug.Assert(_atGate >= _inFlight && _peakAtGate >= _atGate, "Requests at the gate include those served; the peak is at least those.");
        Debug.Assert(_latency.Count == _served, "Every served request has exactly one latency sample.");
    }
}

/// <summary>The server's settings now, read beside the counters for one <c>/stats</c> document.</summary>
internal readonly record struct DownstreamState(int Queued, int Capacity, int QueueLimit, string Latency, string Phase, double StormSecondsLeft);
