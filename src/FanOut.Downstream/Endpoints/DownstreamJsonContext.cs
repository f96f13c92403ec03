using System.Text.Json.Serialization;

using FanOut.Downstream.Stats;

namespace FanOut.Downstream.Endpoints;

/// <summary>Source-generated JSON for every body the server writes: no reflection, no per-request metadata work.</summary>
[JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase)]
[JsonSerializable(typeof(ItemResponse))]
[JsonSerializable(typeof(PriceResponse))]
[JsonSerializable(typeof(DownstreamStats))]
internal sealed partial class DownstreamJsonContext : JsonSerializerContext;
