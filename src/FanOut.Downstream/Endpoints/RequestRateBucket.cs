namespace FanOut.Downstream.Endpoints;

/// <summary>
/// The server's rate limit: a token bucket of <c>burst</c> tokens refilled at <c>rate</c> per second, computed from the time
/// elapsed at each request (no timer). A timer-driven bucket (System.Threading.RateLimiting's, refilled per tick) loses the
/// tokens of a late tick beyond its small burst, so on a busy machine it let a 300/s server pass 123/s and a probe's known
/// answer moved with the machine's load; this one passes exactly <c>rate</c> per second over any busy stretch.
/// </summary>
internal sealed class RequestRateBucket
{
    private readonly double _ratePerTick;
    private readonly double _burst;
    private readonly TimeProvider _time;
    private readonly Lock _lock = new();

    /// <summary>Tokens at <see cref="_updated"/>; guarded by <see cref="_lock"/>.</summary>
    private double _tokens;

    /// <summary>When <see cref="_tokens"/> was computed, a timestamp of <see cref="_time"/>.</summary>
    private long _updated;

    public RequestRateBucket(double ratePerSecond, int burst, TimeProvider time)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(ratePerSecond);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(burst);
        _time = time;
        _ratePerTick = ratePerSecond / time.TimestampFrequency;
        _burst = burst;
        _tokens = burst;
        _updated = time.GetTimestamp();
    }

    /// <summary>Takes a token if one is there; else says when the next one will be.</summary>
    /// <param name="retryAfter">Until the next token, when none was taken.</param>
    public bool TryTake(out TimeSpan retryAfter)
    {
        var now = _time.GetTimestamp();
        lock (_lock)
        {
            _tokens = Math.Min(_burst, _tokens + ((now - _updated) * _ratePerTick));
            _updated = now;
            if (_tokens >= 1)
            {
                _tokens--;
                retryAfter = TimeSpan.Zero;
                return true;
            }

            retryAfter = TimeSpan.FromSeconds((1 - _tokens) / (_ratePerTick * _time.TimestampFrequency));
            return false;
        }
    }
}
