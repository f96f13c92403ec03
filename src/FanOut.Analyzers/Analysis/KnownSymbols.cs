using Microsoft.CodeAnalysis;

namespace FanOut.Analyzers.Analysis;

/// <summary>The BCL and FanOut types the rules look for, resolved once per compilation.</summary>
internal sealed class KnownSymbols
{
    private KnownSymbols(Compilation compilation)
    {
        Parallel = compilation.GetTypeByMetadataName("System.Threading.Tasks.Parallel");
        ParallelOptions = compilation.GetTypeByMetadataName("System.Threading.Tasks.ParallelOptions");
        Task = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task");
        TaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task`1");
        ValueTask = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask");
        ValueTaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask`1");
        CancellationToken = compilation.GetTypeByMetadataName("System.Threading.CancellationToken");
        Enumerable = compilation.GetTypeByMetadataName("System.Linq.Enumerable");
        FanOutExtensions = compilation.GetTypeByMetadataName("FanOut.FanOutExtensions");
        ConcurrencyLimit = compilation.GetTypeByMetadataName("FanOut.ConcurrencyLimit");
        SemaphoreSlim = compilation.GetTypeByMetadataName("System.Threading.SemaphoreSlim");
        RateLimiter = compilation.GetTypeByMetadataName("System.Threading.RateLimiting.RateLimiter");
        HttpMessageInvoker = compilation.GetTypeByMetadataName("System.Net.Http.HttpMessageInvoker");
        HttpClientFactory = compilation.GetTypeByMetadataName("System.Net.Http.IHttpClientFactory");
        FanOutLimitHandler = compilation.GetTypeByMetadataName("FanOut.Http.FanOutLimitHandler");
        ResiliencePipeline = compilation.GetTypeByMetadataName("Polly.ResiliencePipeline");
        ResiliencePipelineOfT = compilation.GetTypeByMetadataName("Polly.ResiliencePipeline`1");
    }

    /// <summary>System.Threading.Tasks.Parallel, or null when the compilation has no TPL.</summary>
    public INamedTypeSymbol? Parallel { get; }

    /// <summary>System.Threading.Tasks.ParallelOptions.</summary>
    public INamedTypeSymbol? ParallelOptions { get; }

    /// <summary>System.Threading.Tasks.Task.</summary>
    public INamedTypeSymbol? Task { get; }

    /// <summary>System.Threading.Tasks.Task&lt;T&gt;.</summary>
    public INamedTypeSymbol? TaskOfT { get; }

    /// <summary>System.Threading.Tasks.ValueTask.</summary>
    public INamedTypeSymbol? ValueTask { get; }

    /// <summary>System.Threading.Tasks.ValueTask&lt;T&gt;.</summary>
    public INamedTypeSymbol? ValueTaskOfT { get; }

    /// <summary>System.Threading.CancellationToken.</summary>
    public INamedTypeSymbol? CancellationToken { get; }

    /// <summary>System.Linq.Enumerable.</summary>
    public INamedTypeSymbol? Enumerable { get; }

    /// <summary>FanOut.FanOutExtensions, or null when the FanOut library is not referenced.</summary>
    public INamedTypeSymbol? FanOutExtensions { get; }

    /// <summary>FanOut.ConcurrencyLimit, the base of every FanOut limit.</summary>
    public INamedTypeSymbol? ConcurrencyLimit { get; }

    /// <summary>System.Threading.SemaphoreSlim.</summary>
    public INamedTypeSymbol? SemaphoreSlim { get; }

    /// <summary>System.Threading.RateLimiting.RateLimiter, or null when the package is not referenced.</summary>
    public INamedTypeSymbol? RateLimiter { get; }

    /// <summary>System.Net.Http.HttpMessageInvoker, the base of HttpClient.</summary>
    public INamedTypeSymbol? HttpMessageInvoker { get; }

    /// <summary>System.Net.Http.IHttpClientFactory (Microsoft.Extensions.Http): clients whose handlers are configured out of sight.</summary>
    public INamedTypeSymbol? HttpClientFactory { get; }

    /// <summary>FanOut.Http.FanOutLimitHandler, or null when FanOut.Http is not referenced.</summary>
    public INamedTypeSymbol? FanOutLimitHandler { get; }

    /// <summary>Polly.ResiliencePipeline (Polly v8).</summary>
    public INamedTypeSymbol? ResiliencePipeline { get; }

    /// <summary>Polly.ResiliencePipeline&lt;T&gt;.</summary>
    public INamedTypeSymbol? ResiliencePipelineOfT { get; }

    /// <summary>Resolves the symbols of one compilation.</summary>
    public static KnownSymbols From(Compilation compilation) => new(compilation);

    /// <summary>Parallel.For, ForEach or Invoke: the loops whose bodies are synchronous delegates.</summary>
    public bool IsSynchronousParallelLoop(IMethodSymbol method) =>
        Is(method.ContainingType, Parallel) && method.Name is "For" or "ForEach" or "Invoke";

    /// <summary>Parallel.ForEachAsync or ForAsync: the loops with a default limit of ProcessorCount.</summary>
    public bool IsAsyncParallelLoop(IMethodSymbol method) =>
        Is(method.ContainingType, Parallel) && method.Name is "ForEachAsync" or "ForAsync";

    /// <summary>A loop whose body receives its own cancellation token: Parallel.ForEachAsync/ForAsync, FanOutAsync/FanOutStream.</summary>
    public bool IsLoopWithBodyToken(IMethodSymbol method) =>
        IsAsyncParallelLoop(method)
        || (Is(method.ContainingType, FanOutExtensions) && method.Name is "FanOutAsync" or "FanOutStream");

    /// <summary>Task, Task&lt;T&gt;, ValueTask or ValueTask&lt;T&gt;.</summary>
    public bool IsTaskLike(ITypeSymbol? type) =>
        type is INamedTypeSymbol named
        && (Is(named, Task) || Is(named.OriginalDefinition, TaskOfT) || Is(named, ValueTask) || Is(named.OriginalDefinition, ValueTaskOfT)
            || Is(named.BaseType?.OriginalDefinition, TaskOfT));

    /// <summary>Task&lt;T&gt; or ValueTask&lt;T&gt;: the awaitables with a result.</summary>
    public bool IsTaskLikeWithResult(ITypeSymbol? type) =>
        type is INamedTypeSymbol named && (Is(named.OriginalDefinition, TaskOfT) || Is(named.OriginalDefinition, ValueTaskOfT));

    /// <summary>System.Threading.CancellationToken.</summary>
    public bool IsCancellationToken(ITypeSymbol? type) => Is(type, CancellationToken);

    /// <summary>Whether <paramref name="type"/> is <paramref name="known"/> or derives from it (false when either is missing).</summary>
    public static bool IsOrDerivesFrom(ITypeSymbol? type, ITypeSymbol? known)
    {
        if (known is null)
        {
            return false;
        }

        for (var current = type; current is not null; current = current.BaseType)
        {
            if (Is(current.OriginalDefinition, known))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Whether two symbols are the same type (false when either is missing).</summary>
    public static bool Is(ITypeSymbol? type, ITypeSymbol? known) =>
        type is not null && known is not null && SymbolEqualityComparer.Default.Equals(type, known);
}
