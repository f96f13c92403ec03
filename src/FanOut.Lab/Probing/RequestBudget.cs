namespace FanOut.Lab.Probing;

/// <summary>The <c>--max-requests</c> hard stop, shared by every worker of every level: a request is sent only with a ticket.</summary>
internal sealed class RequestBudget(long? maxRequests)
{
    private long _sent;

    /// <summary>Requests sent so far.</summary>
    public long Sent => Interlocked.Read(ref _sent);

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
}
