using System.Net;

namespace FanOut.Benchmarks.Overload;

/// <summary>A downstream that serves <c>capacity</c> calls at once for a fixed time and answers 429 at once beyond that.</summary>
public sealed class RejectingDownstream(int capacity, TimeSpan serviceTime)
{
    private int _inFlight;
    private long _calls;
    private long _rejected;

    public long Calls => Interlocked.Read(ref _calls);

    public long Rejected => Interlocked.Read(ref _rejected);

    public async ValueTask<int> CallAsync(int item, CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _calls);
        if (Interlocked.Increment(ref _inFlight) > capacity)
        {
            Interlocked.Decrement(ref _inFlight);
            Interlocked.Increment(ref _rejected);
            throw new HttpRequestException("429 Too Many Requests", null, HttpStatusCode.TooManyRequests);
        }

        try
        {
            await Task.Delay(serviceTime, cancellationToken);
            return item;
        }
        finally
        {
            Interlocked.Decrement(ref _inFlight);
        }
    }
}
