using Microsoft.CodeAnalysis;

namespace FanOut.Analyzers;

/// <summary>The descriptors of FO0001-FO0005. Their rule pages ship in the repository (docs/analyzers/FO000N.md).</summary>
internal static class FanOutDiagnostics
{
    /// <summary>
    /// Where the rule pages are published, with a trailing slash (the page is <c>{HelpLinkBase}FO000N.md</c>); null until the
    /// project has a public home, so the diagnostics carry no link rather than one to an address nobody owns. Set it here,
    /// once, and every descriptor links to its page.
    /// </summary>
    internal const string? HelpLinkBase = null;

    private const string Category = "Concurrency";

    /// <summary>The rule page of <paramref name="id"/>, or null while <see cref="HelpLinkBase"/> is.</summary>
    internal static string? HelpLink(string id) => string.IsNullOrEmpty(HelpLinkBase) ? null : HelpLinkBase + id + ".md";

    internal static readonly DiagnosticDescriptor AsyncLambdaInParallelLoop = new(
        DiagnosticIds.AsyncLambdaInParallelLoop,
        title: "Async lambda passed to a synchronous Parallel loop",
        messageFormat: "This async lambda becomes 'async void' in Parallel.{0}: the loop returns before the work ends and its exceptions are lost; use Parallel.ForEachAsync{1}",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Parallel.For, ForEach and Invoke take Action delegates. An async lambda converted to an Action is async void: each iteration returns at its first await, the loop reports completion while the work still runs, and an exception crashes the process instead of reaching the caller.",
        helpLinkUri: HelpLink(DiagnosticIds.AsyncLambdaInParallelLoop));

    internal static readonly DiagnosticDescriptor BlockingWaitInParallelLoop = new(
        DiagnosticIds.BlockingWaitInParallelLoop,
        title: "Blocking wait inside a Parallel loop body",
        messageFormat: "'{0}' blocks a thread-pool thread inside Parallel.{1} and starves the pool; await it in Parallel.ForEachAsync{2}",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Parallel.For and ForEach run their bodies on thread-pool threads. A body that blocks on a task (.Result, .Wait(), .GetAwaiter().GetResult(), Task.WaitAll) holds its thread for the whole wait, the loop asks for more threads, and the pool injects them slowly: the lab measured 19.7 s instead of 20 ms for 500 x 20 ms waits, with the pool grown to 380 threads.",
        helpLinkUri: HelpLink(DiagnosticIds.BlockingWaitInParallelLoop));

    internal static readonly DiagnosticDescriptor UnboundedWhenAll = new(
        DiagnosticIds.UnboundedWhenAll,
        title: "Task.WhenAll over a collection of unbounded size",
        messageFormat: "Task.WhenAll over one task per item of '{0}' starts them all at once, with no limit; use {1}",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Select creates and starts every task when it is enumerated, and a foreach that adds a call's task to a list per item does the same, so Task.WhenAll over a projection of a parameter, field, query result or any IEnumerable puts every item in flight at once: a denial-of-service attack on your own downstream when the list is large. FanOutAsync or Parallel.ForEachAsync enforce a limit.",
        helpLinkUri: HelpLink(DiagnosticIds.UnboundedWhenAll));

    internal static readonly DiagnosticDescriptor OuterTokenInLoopBody = new(
        DiagnosticIds.OuterTokenInLoopBody,
        title: "Outer cancellation token used inside a loop body that has its own",
        messageFormat: "Pass the body's token '{0}' instead of '{1}': it is also canceled when another item fails, so the rest stop early",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Parallel.ForEachAsync and FanOutAsync hand each body a token that is canceled when the caller's token is and when any body fails. A body that passes the outer token keeps working after a failure has already decided the outcome.",
        helpLinkUri: HelpLink(DiagnosticIds.OuterTokenInLoopBody));

    internal static readonly DiagnosticDescriptor DefaultLimitForIo = new(
        DiagnosticIds.DefaultLimitForIo,
        title: "Parallel.ForEachAsync at its default limit while awaiting I/O",
        messageFormat: "Parallel.{0} runs at most Environment.ProcessorCount bodies at once, a limit tuned for CPU work, but this body awaits '{1}'; set MaxDegreeOfParallelism to the concurrency the I/O can take",
        Category,
        DiagnosticSeverity.Info,
        isEnabledByDefault: true,
        description: "Without MaxDegreeOfParallelism, Parallel.ForEachAsync runs ProcessorCount bodies at once. Bodies that wait on I/O leave the cores idle: the lab measured 5,282 ms for 500 x 20 ms waits on 2 cores at the default, 213 ms at 50.",
        helpLinkUri: HelpLink(DiagnosticIds.DefaultLimitForIo));
}
