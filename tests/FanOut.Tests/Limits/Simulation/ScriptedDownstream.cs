namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// A <see cref="DownstreamScript"/> taking calls: the one admission rule of the simulations (LimitSimulation here and the
/// fleet's in FanOut.Redis.Tests, which links this file) and the state it keeps, the calls being served and the calls
/// waiting. The simulation says when a call reaches the downstream (<see cref="Arrive"/>) and when a served call's answer
/// has gone back (<see cref="Leave"/>); the downstream tells it, through the callbacks given at construction, that a call
/// is being served (answered after its service time) or is answered 429.
/// </summary>
/// <typeparam name="TCall">The simulation's call.</typeparam>
public sealed class ScriptedDownstream<TCall>
{
    /// <summary>Sigma of <see cref="LatencyShape.HeavyTail"/>: ln(10) / 2.326 (the p99 z-score) puts p99 at 10x the median.</summary>
    private const double HeavyTailSigma = 0.99;

    private readonly DownstreamScript _script;
    private readonly Random _random;
    private readonly Action<TCall, TimeSpan> _serve;
    private readonly Action<TCall, TimeSpan?> _reject;
    private readonly Queue<TCall> _waiting = new();
    private readonly List<(TimeSpan At, bool Rejected)> _calls = [];
    private int _served;
    private double _tokens = double.NaN;
    private TimeSpan _tokensAt;

    /// <param name="script">The downstream's state over time.</param>
    /// <param name="random">The simulation's seeded generator, shared with its client (so a run is repeatable for a seed): service times are drawn from it.</param>
    /// <param name="serve">A call starts being served, now: its answer goes back after the given service time.</param>
    /// <param name="reject">A call is answered 429, now: with the downstream's Retry-After (a storm), or none.</param>
    public ScriptedDownstream(DownstreamScript script, Random random, Action<TCall, TimeSpan> serve, Action<TCall, TimeSpan?> reject)
    {
        _script = script;
        _random = random;
        _serve = serve;
        _reject = reject;
    }

    /// <summary>Every call the downstream saw, and whether it answered 429.</summary>
    public IReadOnlyList<(TimeSpan At, bool Rejected)> Calls => _calls;

    /// <summary>Calls answered 429.</summary>
    public int Rejected => _calls.Count(c => c.Rejected);

    /// <summary>
    /// True when a call refused for want of room (not a storm's) takes a place in service until its "no" has gone back, as a
    /// server whose "no" is work of its own: the simulation then calls <see cref="Leave"/> for it too.
    /// </summary>
    public bool RefusalsTakeAPlace { get; set; }

    /// <summary>
    /// A call reaches the downstream at <paramref name="now"/>: in a storm it is answered 429 with the storm's Retry-After;
    /// served while the capacity has room and nobody waits; queued (FIFO) while the queue has room; else answered 429 with no
    /// Retry-After.
    /// </summary>
    public void Arrive(TCall call, TimeSpan now)
    {
        var state = _script.At(now);
        if (state.RetryAfter is { } storm)
        {
            Reject(call, now, storm);
        }
        else if (state.RatePerSecond > 0 && !TakeToken(now, state))
        {
            Reject(call, now, state.RefusalRetryAfter);
        }
        else if (_served < state.Capacity && _waiting.Count == 0)
        {
            Serve(call, now, state);
        }
        else if (_waiting.Count < state.Queue)
        {
            _waiting.Enqueue(call);
        }
        else
        {
            _served += RefusalsTakeAPlace ? 1 : 0;
            Reject(call, now, state.RefusalRetryAfter);
        }
    }

    /// <summary>A served call's answer has gone back at <paramref name="now"/>: queued calls are served while the capacity (which the script may have raised) has room.</summary>
    public void Leave(TimeSpan now)
    {
        _served--;
        var state = _script.At(now);
        while (_waiting.Count > 0 && _served < state.Capacity)
        {
            Serve(_waiting.Dequeue(), now, state);
        }
    }

    /// <summary>Refills the rate limit's bucket to <paramref name="now"/> and takes a token from it if there is one.</summary>
    private bool TakeToken(TimeSpan now, DownstreamState state)
    {
        _tokens = double.IsNaN(_tokens) ? state.RateBurst : Math.Min(state.RateBurst, _tokens + ((now - _tokensAt).TotalSeconds * state.RatePerSecond));
        _tokensAt = now;
        if (_tokens < 1)
        {
            return false;
        }

        _tokens--;
        return true;
    }

    private void Reject(TCall call, TimeSpan now, TimeSpan? retryAfter)
    {
        _calls.Add((now, true));
        _reject(call, retryAfter);
    }

    private void Serve(TCall call, TimeSpan now, DownstreamState state)
    {
        _calls.Add((now, false));
        _served++;
        var factor = state.Shape switch
        {
            LatencyShape.HeavyTail => Math.Exp(HeavyTailSigma * StandardNormal()),
            LatencyShape.Fixed => 1,
            LatencyShape.Bimodal => (_random.NextDouble() < 0.1 ? 16 : 1) * (0.9 + (0.2 * _random.NextDouble())),
            _ => 0.9 + (0.2 * _random.NextDouble()),
        };
        if (state.SmoothKnee > 0)
        {
            factor *= 1 + Math.Pow((double)_served / state.SmoothKnee, 2);
        }

        var service = TimeSpan.FromTicks(Math.Max(1, (long)(state.Latency.Ticks * factor)));
        _serve(call, state.StallEvery > TimeSpan.Zero ? Stalled(now, service, state.StallEvery, state.StallFor) : service);
    }

    /// <summary>The time from <paramref name="now"/> to the answer of <paramref name="service"/> of work that makes no progress during the stalls.</summary>
    private static TimeSpan Stalled(TimeSpan now, TimeSpan service, TimeSpan every, TimeSpan stall)
    {
        var at = now;
        var left = service;
        while (true)
        {
            var stallStart = TimeSpan.FromTicks(at.Ticks / every.Ticks * every.Ticks);
            if (stallStart > TimeSpan.Zero && at < stallStart + stall)
            {
                at = stallStart + stall; // stalled now: no progress until the stall ends
            }

            var nextStall = stallStart + every;
            if (at + left <= nextStall)
            {
                return at + left - now;
            }

            left -= nextStall - at;
            at = nextStall;
        }
    }

    /// <summary>Box-Muller from the seeded generator, so a run is repeatable.</summary>
    private double StandardNormal()
    {
        var u1 = 1.0 - _random.NextDouble();
        var u2 = _random.NextDouble();
        return Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
    }
}
