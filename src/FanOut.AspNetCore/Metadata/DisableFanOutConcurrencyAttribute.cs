namespace FanOut.AspNetCore;

/// <summary>Exempts an endpoint from the limit: its requests never queue, are never refused and take no permit.</summary>
/// <remarks>For what must answer while the service is saturated: health checks (a load balancer that sees them time out takes a busy instance out), metrics.</remarks>
[AttributeUsage(AttributeTargets.Class | AttributeTargets.Method, AllowMultiple = false, Inherited = true)]
public sealed class DisableFanOutConcurrencyAttribute : Attribute, IDisableFanOutConcurrencyMetadata
{
}
