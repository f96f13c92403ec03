using System.Collections.Immutable;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Testing;

namespace FanOut.Analyzers.Tests.Infrastructure;

/// <summary>
/// The references test code compiles against: the running .NET's own assemblies (no reference pack download, so the
/// tests run offline) and, for the FanOut cases, the FanOut library itself.
/// </summary>
internal static class TestReferences
{
    /// <summary>No package: the framework comes from <see cref="Framework"/>.</summary>
    public static ReferenceAssemblies None { get; } = new("net10.0");

    /// <summary>Every assembly of the running shared framework.</summary>
    public static ImmutableArray<MetadataReference> Framework { get; } = LoadFramework();

    /// <summary>The FanOut library (FanOutExtensions, FanOutOptions, ConcurrencyLimit).</summary>
    public static MetadataReference FanOutLibrary { get; } =
        MetadataReference.CreateFromFile(typeof(FanOutExtensions).Assembly.Location);

    /// <summary>System.Threading.RateLimiting (RateLimiter, TokenBucketRateLimiter), which FanOut references.</summary>
    public static MetadataReference RateLimiting { get; } =
        MetadataReference.CreateFromFile(typeof(System.Threading.RateLimiting.RateLimiter).Assembly.Location);

    /// <summary>Microsoft.Extensions.Http (IHttpClientFactory) and FanOut.Http: handler pipelines configured out of sight.</summary>
    public static ImmutableArray<MetadataReference> HttpClientFactory { get; } =
    [
        MetadataReference.CreateFromFile(typeof(System.Net.Http.IHttpClientFactory).Assembly.Location),
        MetadataReference.CreateFromFile(typeof(FanOut.Http.FanOutLimitHandler).Assembly.Location),
    ];

    /// <summary>Polly.Core (ResiliencePipeline).</summary>
    public static MetadataReference Polly { get; } =
        MetadataReference.CreateFromFile(typeof(global::Polly.ResiliencePipeline).Assembly.Location);

    private static ImmutableArray<MetadataReference> LoadFramework()
    {
        var directory = Path.GetDirectoryName(typeof(object).Assembly.Location)!;
        return [.. Directory.GetFiles(directory, "*.dll")
            .Where(static path => IsManaged(path))
            .Select(static path => (MetadataReference)MetadataReference.CreateFromFile(path))];
    }

    private static bool IsManaged(string path)
    {
        try
        {
            System.Reflection.AssemblyName.GetAssemblyName(path);
            return true;
        }
        catch (BadImageFormatException)
        {
            return false;
        }
    }
}
