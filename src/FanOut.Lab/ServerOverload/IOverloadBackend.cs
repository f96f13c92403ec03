namespace FanOut.Lab.ServerOverload;

/// <summary>The constrained dependency behind the service under test: the database whose capacity makes the service's.</summary>
public interface IOverloadBackend : IAsyncDisposable
{
    /// <summary>One line: what it is and what it serves at once.</summary>
    string Describe { get; }

    /// <summary>Requests per second it serves at most (its capacity, by construction).</summary>
    double CapacityPerSecond { get; }

    /// <summary>One call, as a request handler makes it; stops when <paramref name="cancellationToken"/> (the client's abort) fires.</summary>
    Task CallAsync(CancellationToken cancellationToken);
}
