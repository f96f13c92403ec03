using System.Text.Json.Serialization;

namespace FanOut.Redis.FleetWorker;

/// <summary>Source-generated JSON for <see cref="WorkerReport"/>.</summary>
[JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase)]
[JsonSerializable(typeof(WorkerReport))]
public sealed partial class WorkerJsonContext : JsonSerializerContext;
