using FanOut.AspNetCore;
using FanOut.AspNetCore.Admission;

namespace Microsoft.AspNetCore.Builder;

/// <summary>Puts the request limiter registered by <c>services.AddFanOutConcurrency()</c> in the pipeline.</summary>
public static class FanOutConcurrencyApplicationBuilderExtensions
{
    /// <summary>
    /// Limits the requests that reach the rest of the pipeline. Place it after <c>UseRouting</c> (which minimal apps add
    /// first by themselves) so endpoint metadata (priority, exemption) is seen, and after anything that must answer under
    /// load (a health-check middleware), or exempt those endpoints with <c>DisableFanOutConcurrency()</c>.
    /// </summary>
    /// <param name="app">The application.</param>
    /// <returns><paramref name="app"/>.</returns>
    /// <exception cref="InvalidOperationException"><c>services.AddFanOutConcurrency()</c> was not called.</exception>
    public static IApplicationBuilder UseFanOutConcurrency(this IApplicationBuilder app)
    {
        ArgumentNullException.ThrowIfNull(app);
        if (app.ApplicationServices.GetService(typeof(RequestAdmission)) is null)
        {
            throw new InvalidOperationException("UseFanOutConcurrency needs services.AddFanOutConcurrency() first.");
        }

        return app.UseMiddleware<FanOutConcurrencyMiddleware>();
    }
}
