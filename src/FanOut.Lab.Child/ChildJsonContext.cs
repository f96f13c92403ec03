using System.Text.Json;
using System.Text.Json.Serialization;

using FanOut.Lab.Results;

namespace FanOut.Lab.Child;

/// <summary>Source-generated JSON for the case result, with the settings of <see cref="ResultsJson"/>: NativeAOT and trimming
/// drop the reflection the lab's own serializer uses.</summary>
[JsonSourceGenerationOptions(
    JsonSerializerDefaults.Web,
    WriteIndented = true,
    DefaultIgnoreCondition = JsonIgnoreCondition.Never,
    NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals)]
[JsonSerializable(typeof(CaseResult))]
[JsonSerializable(typeof(int))]
[JsonSerializable(typeof(long))]
[JsonSerializable(typeof(double))]
[JsonSerializable(typeof(string))]
internal sealed partial class ChildJsonContext : JsonSerializerContext;
