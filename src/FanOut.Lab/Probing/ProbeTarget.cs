using System.Net.Http.Headers;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

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
        if (settings.Insecure)
        {
            handler.SslOptions.RemoteCertificateValidationCallback = static (_, _, _, _) => true;
        }
        else if (settings.TrustedRoots is { Count: > 0 } roots)
        {
            handler.SslOptions.RemoteCertificateValidationCallback = (_, certificate, _, errors) => TrustedBy(roots, certificate, errors);
        }

        return new HttpClient(handler, disposeHandler: true) { Timeout = System.Threading.Timeout.InfiniteTimeSpan };
    }

    /// <summary>True when <paramref name="certificate"/> is valid but for its chain, and chains to one of <paramref name="roots"/>.</summary>
    internal static bool TrustedBy(X509Certificate2Collection roots, X509Certificate? certificate, SslPolicyErrors errors)
    {
        if (errors == SslPolicyErrors.None)
        {
            return true;
        }

        if (certificate is null || (errors & ~SslPolicyErrors.RemoteCertificateChainErrors) != 0)
        {
            return false;
        }

        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.CustomTrustStore.AddRange(roots);
        if (certificate is X509Certificate2 typed)
        {
            return chain.Build(typed);
        }

        using var copy = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        return chain.Build(copy);
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
