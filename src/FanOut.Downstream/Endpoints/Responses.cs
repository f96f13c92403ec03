namespace FanOut.Downstream.Endpoints;

/// <summary>The body of <c>GET /item/{id}</c>.</summary>
/// <param name="Id">The requested id, as sent.</param>
/// <param name="Name">A deterministic name, <c>item-{id}</c>.</param>
/// <param name="WorkMs">The simulated work this request waited while holding a slot, in ms (the sampled latency; queue wait not included).</param>
public sealed record ItemResponse(string Id, string Name, double WorkMs);

/// <summary>The body of <c>GET /price/{id}</c>.</summary>
/// <param name="Id">The requested id, as sent.</param>
/// <param name="Price">The deterministic price of <paramref name="Id"/>, see <see cref="PriceCatalog.PriceOf"/>.</param>
public sealed record PriceResponse(string Id, decimal Price);
