using FanOut.AspNetCore;

namespace Microsoft.AspNetCore.Builder;

/// <summary>Sets an endpoint's priority, or exempts it, for <c>UseFanOutConcurrency</c>.</summary>
public static class FanOutConcurrencyEndpointConventionBuilderExtensions
{
    /// <summary>Gives the endpoints' requests <paramref name="priority"/> (the lowest is refused first under pressure).</summary>
    /// <typeparam name="TBuilder">The endpoint convention builder.</typeparam>
    /// <param name="builder">The endpoints.</param>
    /// <param name="priority">One of <see cref="RequestPriority"/>'s values.</param>
    /// <returns><paramref name="builder"/>.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="priority"/> is not a defined value.</exception>
    public static TBuilder WithRequestPriority<TBuilder>(this TBuilder builder, RequestPriority priority)
        where TBuilder : IEndpointConventionBuilder
    {
        ArgumentNullException.ThrowIfNull(builder);
        var metadata = new RequestPriorityAttribute(RequestPriorityCheck.Defined(priority, nameof(priority)));
        builder.Add(endpoint => endpoint.Metadata.Add(metadata));
        return builder;
    }

    /// <summary>Exempts the endpoints from the limit: <c>app.MapHealthChecks("/healthz").DisableFanOutConcurrency()</c>.</summary>
    /// <typeparam name="TBuilder">The endpoint convention builder.</typeparam>
    /// <param name="builder">The endpoints.</param>
    /// <returns><paramref name="builder"/>.</returns>
    public static TBuilder DisableFanOutConcurrency<TBuilder>(this TBuilder builder)
        where TBuilder : IEndpointConventionBuilder
    {
        ArgumentNullException.ThrowIfNull(builder);
        var metadata = new DisableFanOutConcurrencyAttribute();
        builder.Add(endpoint => endpoint.Metadata.Add(metadata));
        return builder;
    }
}
