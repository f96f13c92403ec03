using System.Net.Http.Headers;

namespace FanOut.Lab.Probing;

/// <summary>Builds the request the settings describe, fresh for every send (a request message is single-use).</summary>
internal sealed class ProbeTarget(ProbeSettings settings)
{
    /// <summary>The settings the requests come from.</summary>
    public ProbeSettings Settings => settings;

    /// <summary>A new request: method, URL, headers and body.</summary>
    public HttpRequestMessage CreateRequest()
    {
        var request = new HttpRequestMessage(settings.Method, settings.Url);
        if (settings.Body is { } body)
        {
            request.Content = new ReadOnlyMemoryContent(body);
        }

        foreach (var (name, value) in settings.Headers)
        {
            if (!request.Headers.TryAddWithoutValidation(name, value))
            {
                request.Content ??= new ReadOnlyMemoryContent(ReadOnlyMemory<byte>.Empty);
                request.Content.Headers.TryAddWithoutValidation(name, value);
            }
        }

        return request;
    }

    /// <summary>A client sized to <paramref name="connections"/> connections, so the level's concurrency reaches the server.</summary>
    public HttpClient CreateClient(int connections)
    {
        var handler = new SocketsHttpHandler
        {
            MaxConnectionsPerServer = connections,
            ConnectTimeout = settings.Timeout,
            AllowAutoRedirect = false,
            UseCookies = false,
        };
        return new HttpClient(handler, disposeHandler: true) { Timeout = System.Threading.Timeout.InfiniteTimeSpan };
    }

    /// <summary>True when a rejection carries a header that names a rate: <c>Retry-After</c>, <c>RateLimit-*</c> or <c>X-RateLimit-*</c>.</summary>
    public static bool NamesRateLimit(HttpResponseHeaders headers)
    {
        ArgumentNullException.ThrowIfNull(headers);
        return headers.RetryAfter is not null
            || headers.Any(h => h.Key.StartsWith("RateLimit", StringComparison.OrdinalIgnoreCase)
                || h.Key.StartsWith("X-RateLimit", StringComparison.OrdinalIgnoreCase));
    }
}
