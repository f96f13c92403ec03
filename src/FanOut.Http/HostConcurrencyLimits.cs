using System.Collections.Concurrent;
using System.Threading.RateLimiting;

namespace FanOut.Http;

/// <summary>
/// One <see cref="ConcurrencyLimit"/> per destination (<c>host:port</c>), made on first use and kept: the budgets every
/// <see cref="FanOutLimitHandler"/> made from this instance shares, however often IHttpClientFactory recycles its handlers.
/// </summary>
/// <remarks>
/// Bounded: after <see cref="FanOutHttpOptions.MaxHosts"/> destinations, further ones share one more limit, so a client that
/// calls an unbounded set of hosts keeps a bounded map (and a limit in use is never dropped and replaced).
/// </remarks>
public sealed class HostConcurrencyLimits
{
    private readonly ConcurrentDictionary<string, Entry> _limits = new(StringComparer.OrdinalIgnoreCase);
    private readonly Lazy<Entry> _overflow;

    /// <summary>Creates an empty map that makes limits as <paramref name="options"/> say.</summary>
    /// <param name="options">The handler's options; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentOutOfRangeException">An option is outside its documented range.</exception>
    public HostConcurrencyLimits(FanOutHttpOptions? options = null)
    {
        Options = options ?? new FanOutHttpOptions();
        Options.Validate();
        _overflow = new(() => Create("*"));
    }

    /// <summary>The options the handlers use.</summary>
    public FanOutHttpOptions Options { get; }

    /// <summary>Destinations with a limit of their own so far.</summary>
    public int Count => _limits.Count;

    /// <summary>The limit of <paramref name="uri"/>'s destination, made on first use.</summary>
    /// <param name="uri">An absolute request URI.</param>
    /// <exception cref="ArgumentException"><paramref name="uri"/> is not absolute.</exception>
    public ConcurrencyLimit GetLimit(Uri uri) => GetEntry(uri).Limit;

    internal Entry GetEntry(Uri uri)
    {
        ArgumentNullException.ThrowIfNull(uri);
        if (!uri.IsAbsoluteUri)
        {
            throw new ArgumentException($"The request URI '{uri}' is not absolute: set HttpClient.BaseAddress or use an absolute URI.", nameof(uri));
        }

        var key = string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{uri.IdnHost}:{uri.Port}");
        if (_limits.TryGetValue(key, out var entry))
        {
            return entry;
        }

        // Racing first requests to one host may both make a limit; GetOrAdd keeps one, and the loser's was never used.
        return _limits.Count >= Options.MaxHosts ? _overflow.Value : _limits.GetOrAdd(key, Create);
    }

    /// <summary>The name a host's default limit publishes its changes under (<see cref="AdaptiveLimitOptions.Name"/>):
    /// <c>http:</c> and the host's key, <c>http:api.example.com:443</c>; <c>http:*</c> for the hosts beyond
    /// <see cref="FanOutHttpOptions.MaxHosts"/>, which share one.</summary>
    internal static string LimitName(string key) => "http:" + key;

    private Entry Create(string key)
    {
        var limit = Options.LimitFactory?.Invoke(key) ?? ConcurrencyLimit.Adaptive(FanOutHttpOptions.DefaultLimitOptions with { Name = LimitName(key) });
        if (limit is null)
        {
            throw new InvalidOperationException($"FanOutHttpOptions.LimitFactory returned null for '{key}'.");
        }

        return new Entry(limit, limit.AsRateLimiter());
    }

    /// <summary>A destination's limit and the RateLimiter view of it the handler takes leases from.</summary>
    internal sealed record Entry(ConcurrencyLimit Limit, RateLimiter Leases);
}
