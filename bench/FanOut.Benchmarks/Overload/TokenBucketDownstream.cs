using System.Diagnostics;
using System.Net;

namespace FanOut.Benchmarks.Overload;

/// <summary>
/// A downstream behind a token bucket of <c>ratePerSecond</c> (burst <c>burst</c>): a call that finds a token is served in
/// <c>serviceTime</c>; one that finds none is answered 429 at once, with a <c>Retry-After</c> hint (the time to the next
/// token) when <c>hint</c> is set.
/// </summary>
public sealed class TokenBucketDownstream(double ratePerSecond, int burst, TimeSpan serviceTime, bool hint)
{
    private readonly Lock _lock = new();
    private readonly long _start = Stopwatch.GetTimestamp();
    private double _tokens = burst;
    private double _lastSeconds;
    private long _calls;
    private long _rejected;

    public long Calls => Interlocked.Read(ref _calls);

    public long Rejected => Interlocked.Read(ref _rejected);

    public async ValueTask<int> CallAsync(int item, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _calls);
        TimeSpan? wait = null;
        lock (_lock)
        {
            var now = Stopwatch.GetElapsedTime(_start).TotalSeconds;
            _tokens = Math.Min(burst, _tokens + ((now - _lastSeconds) * ratePerSecond));
            _lastSeconds = now;
            if (_tokens >= 1)
            {
                _tokens--;
            }
            else
            {
                wait = TimeSpan.FromSeconds((1 - _tokens) / ratePerSecond);
            }
        }

        if (wait is { } retryAfter)
        {
            Interlocked.Increment(ref _rejected);
            var rejection = new HttpRequestException("429 Too Many Requests", null, HttpStatusCode.TooManyRequests);
            throw hint ? new OverloadedException("429 Too Many Requests", retryAfter, rejection) : rejection;
        }

        await Task.Delay(serviceTime, cancellationToken);
        return item;
    }
}
