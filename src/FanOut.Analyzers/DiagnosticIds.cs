namespace FanOut.Analyzers;

/// <summary>The ids of FanOut's diagnostics, shared by the analyzers, the code fixes and the docs pages.</summary>
public static class DiagnosticIds
{
    /// <summary>An async lambda handed to Parallel.For/ForEach/Invoke, where it becomes async void.</summary>
    public const string AsyncLambdaInParallelLoop = "FO0001";

    /// <summary>A blocking wait on a task inside a synchronous Parallel loop body.</summary>
    public const string BlockingWaitInParallelLoop = "FO0002";

    /// <summary>Task.WhenAll over a projection of a collection of unknown size: every item in flight at once.</summary>
    public const string UnboundedWhenAll = "FO0003";

    /// <summary>A token from outside passed inside a Parallel.ForEachAsync or FanOutAsync body that has its own.</summary>
    public const string OuterTokenInLoopBody = "FO0004";

    /// <summary>Parallel.ForEachAsync left at its ProcessorCount default while its body awaits I/O.</summary>
    public const string DefaultLimitForIo = "FO0005";
}
