using System.Threading.RateLimiting;

using Microsoft.AspNetCore.Http;

namespace FanOut.AspNetCore;

/// <summary>An admitted request's permit: disposing it gives the permit back exactly once and tells the limit how the request ended.</summary>
/// <remarks>
/// The one owner of the permit from admission to <see cref="Dispose(bool)"/>. A second Dispose, from any thread, finds
/// <see cref="_owner"/> already taken by the first and does nothing. A lease never disposed keeps its permit: the owner must dispose it.
/// </remarks>
internal sealed class FanOutConcurrencyLease : RateLimitLease
{
    private readonly HttpContext? _context;
    private readonly long _admitted;
    private readonly long? _start;
    private readonly bool _marksExceptions;

    /// <summary>The limiter the permit goes back to; null once it went back.</summary>
    private FanOutConcurrencyLimiter? _owner;

    public FanOutConcurrencyLease(FanOutConcurrencyLimiter owner, HttpContext? context, long admitted, long? start, bool marksExceptions)
    {
        _marksExceptions = marksExceptions;
        _owner = owner;
        _context = context;
        _admitted = admitted;
        _start = start;
    }

    public override bool IsAcquired => true;

    public override IEnumerable<string> MetadataNames => [];

    public override bool TryGetMetadata(string metadataName, out object? metadata)
    {
        metadata = null;
        return false;
    }

    protected override void Dispose(bool disposing)
    {
        if (Interlocked.Exchange(ref _owner, null) is { } owner)
        {
            owner.GiveBack(_context, _admitted, _start, _marksExceptions);
        }
    }
}

/// <summary>A request let through without a permit: an exempt endpoint, or a limit that threw and fails open. Nothing to give back.</summary>
internal sealed class NoPermitLease : RateLimitLease
{
    public static readonly NoPermitLease Instance = new();

    private NoPermitLease()
    {
    }

    public override bool IsAcquired => true;

    public override IEnumerable<string> MetadataNames => [];

    public override bool TryGetMetadata(string metadataName, out object? metadata)
    {
        metadata = null;
        return false;
    }
}

/// <summary>A refusal: no permit, carries <see cref="MetadataName.RetryAfter"/>, and the status code to answer with. Shared: it holds nothing.</summary>
internal sealed class RefusedLease : RateLimitLease
{
    private static readonly string[] s_names = [MetadataName.RetryAfter.Name];
    private readonly TimeSpan _retryAfter;

    public RefusedLease(TimeSpan retryAfter, int statusCode)
    {
        _retryAfter = retryAfter;
        StatusCode = statusCode;
    }

    public int StatusCode { get; }

    public override bool IsAcquired => false;

    public override IEnumerable<string> MetadataNames => s_names;

    public override bool TryGetMetadata(string metadataName, out object? metadata)
    {
        if (metadataName == MetadataName.RetryAfter.Name)
        {
            metadata = _retryAfter;
            return true;
        }

        metadata = null;
        return false;
    }
}

/// <summary>Set by <c>UseFanOutConcurrency</c> when the request threw: the lease reads it when disposed, while the exception unwinds.</summary>
internal sealed class RequestFailureFeature(Exception exception)
{
    public Exception Exception { get; } = exception;
}
