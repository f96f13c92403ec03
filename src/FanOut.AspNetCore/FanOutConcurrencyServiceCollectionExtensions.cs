using FanOut.AspNetCore;
using FanOut.AspNetCore.Admission;

using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers the request limiter (<see cref="FanOutConcurrencyLimiter"/>) that <c>app.UseFanOutConcurrency()</c> puts in the pipeline, or ASP.NET Core's rate limiting uses.</summary>
public static class FanOutConcurrencyServiceCollectionExtensions
{
    /// <summary>Registers the limiter (a singleton <see cref="FanOutConcurrencyLimiter"/>) with its options; checked at startup (a value out of range stops the host with one line naming it).</summary>
    /// <param name="services">The services.</param>
    /// <param name="configure">Sets the options; <see langword="null"/> for the documented defaults (an adaptive limit).</param>
    /// <returns><paramref name="services"/>.</returns>
    public static IServiceCollection AddFanOutConcurrency(this IServiceCollection services, Action<FanOutConcurrencyOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        var options = services.AddOptions<FanOutConcurrencyOptions>();
        if (configure is not null)
        {
            options.Configure(configure);
        }

        options.ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<FanOutConcurrencyOptions>, FanOutConcurrencyOptionsValidator>());
        services.TryAddSingleton(provider => new RequestAdmission(
            provider.GetRequiredService<IOptions<FanOutConcurrencyOptions>>().Value,
            provider.GetRequiredService<ILoggerFactory>().CreateLogger<FanOutConcurrencyLimiter>()));
        services.TryAddSingleton(provider => new FanOutConcurrencyLimiter(
            provider.GetRequiredService<RequestAdmission>(),
            provider.GetRequiredService<IOptions<FanOutConcurrencyOptions>>().Value,
            provider.GetRequiredService<ILoggerFactory>().CreateLogger<FanOutConcurrencyLimiter>()));

        // The named policy's partitions find their request through it (FanOutConcurrencyPolicy): one AsyncLocal per request.
        services.AddHttpContextAccessor();
        return services;
    }

    private sealed class FanOutConcurrencyOptionsValidator : IValidateOptions<FanOutConcurrencyOptions>
    {
        public ValidateOptionsResult Validate(string? name, FanOutConcurrencyOptions options) =>
            options.FirstError() is { } error ? ValidateOptionsResult.Fail(error) : ValidateOptionsResult.Success;
    }
}
