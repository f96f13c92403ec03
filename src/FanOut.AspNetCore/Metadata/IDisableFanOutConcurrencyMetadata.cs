namespace FanOut.AspNetCore;

/// <summary>Endpoint metadata: the endpoint's requests skip the limit (health checks, readiness probes, metrics).</summary>
public interface IDisableFanOutConcurrencyMetadata
{
}
