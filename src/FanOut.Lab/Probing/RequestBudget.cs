namespace FanOut.Lab.Probing;

/// <summary>The <c>--max-requests</c> hard stop and the <c>--max-rate</c> pace, shared by every worker of every level: a
/// request is sent only with a ticket, and never sooner than its slot.</summary>
/// <remarks>Slots are handed out in order, 1 / rate apart, by compare-and-swap on the next free timestamp, so the pace holds
/// across levels and workers without a lock; a slot not used (cancelled) is simply lost, which only slows the probe.</remarks>
internal sealed class RequestBudget(long? maxRequests, double? maxRatePerSecond, TimeProvider time)
{
    private long _sent;
    private long _nextSlot = long.MinValue;

    /// <summary>A budget without a pace.</summary>
    public RequestBudget(long? maxRequests)
        : this(maxRequests, null, TimeProvider.System)
    {
    }

    /// <summary>Requests sent so far.</summary>
    public long Sent => Interlocked.Read(ref _sent);

    /// <summary>The pace, requests per second; null when none.</summary>
    public double? MaxRatePerSecond => maxRatePerSecond;

    /// <summary>True once every allowed request has been sent.</summary>
    public bool Exhausted => maxRequests is { } max && Sent >= max;

    /// <summary>Takes a ticket for one request; false when the budget is spent (and then nothing was taken).</summary>
    public bool TryTake()
    {
        while (true)
        {
            var sent = Interlocked.Read(ref _sent);
            if (maxRequests is { } max && sent >= max)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _sent, sent + 1, sent) == sent)
            {
                return true;
            }
        }
    }

    /// <summary>Takes a ticket and waits for the request's slot under <c>--max-rate</c>; false when the budget is spent
    /// or <paramref name="cancellationToken"/> fired while waiting.</summary>
    public async ValueTask<bool> TakeAsync(CancellationToken cancellationToken)
    {
        if (!TryTake())
        {
            return false;
        }

        if (maxRatePerSecond is not { } rate)
        {
            return true;
        }

        var interval = (long)Math.Max(1, time.TimestampFrequency / rate);
        long slot;
        while (true)
        {
            var next = Interlocked.Read(ref _nextSlot);
            slot = Math.Max(time.GetTimestamp(), next);
            if (Interlocked.CompareExchange(ref _nextSlot, slot + interval, next) == next)
            {
                break;
            }
        }

        var wait = time.GetElapsedTime(time.GetTimestamp(), slot);
        if (wait <= TimeSpan.Zero)
        {
            return true;
        }

        try
        {
            await Task.Delay(wait, time, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
