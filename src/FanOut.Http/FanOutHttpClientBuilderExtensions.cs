using FanOut;
using FanOut.Http;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Adds a FanOut concurrency limit per destination host to an HttpClient from IHttpClientFactory.</summary>
public static class FanOutHttpClientBuilderExtensions
{
    /// <summary>
    /// Sends the client's requests under an adaptive limit per destination host (<c>host:port</c>), which learns the
    /// concurrency each host affords; 429 and 503 back it off and are re-sent after their Retry-After when idempotent.
    /// </summary>
    /// <param name="builder">The client's builder.</param>
    /// <returns><paramref name="builder"/>.</returns>
    public static IHttpClientBuilder AddFanOutLimit(this IHttpClientBuilder builder) =>
        builder.AddFanOutLimit(new HostConcurrencyLimits());

    /// <summary>As <see cref="AddFanOutLimit(IHttpClientBuilder)"/>, with the limit <paramref name="limitForHost"/> makes for each destination.</summary>
    /// <param name="builder">The client's builder.</param>
    /// <param name="limitForHost">Makes a destination's limit from its key <c>host:port</c>, e.g. <c>host =&gt; ConcurrencyLimit.Fixed(16)</c>.</param>
    /// <returns><paramref name="builder"/>.</returns>
    public static IHttpClientBuilder AddFanOutLimit(this IHttpClientBuilder builder, Func<string, ConcurrencyLimit> limitForHost)
    {
        ArgumentNullException.ThrowIfNull(limitForHost);
        return builder.AddFanOutLimit(new HostConcurrencyLimits(new FanOutHttpOptions { LimitFactory = limitForHost }));
    }

    /// <summary>As <see cref="AddFanOutLimit(IHttpClientBuilder)"/>, over limits you keep (to share them between clients, or read them).</summary>
    /// <param name="builder">The client's builder.</param>
    /// <param name="limits">The per-destination limits and the handler's options.</param>
    /// <returns><paramref name="builder"/>.</returns>
    /// <remarks>IHttpClientFactory recycles handlers; every handler it makes for this client uses <paramref name="limits"/>, so the budgets outlive them.</remarks>
    public static IHttpClientBuilder AddFanOutLimit(this IHttpClientBuilder builder, HostConcurrencyLimits limits)
    {
        ArgumentNullException.ThrowIfNull(builder);
        ArgumentNullException.ThrowIfNull(limits);
        return builder.AddHttpMessageHandler(() => new FanOutLimitHandler(limits));
    }
}
