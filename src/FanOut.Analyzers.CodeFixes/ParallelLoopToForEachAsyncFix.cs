using System.Collections.Immutable;
using System.Composition;
using System.Linq;
using System.Threading.Tasks;

using FanOut.Analyzers.Analysis;
using FanOut.Analyzers.CodeFixes.Rewriting;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace FanOut.Analyzers.CodeFixes;

/// <summary>
/// FO0001 and FO0002: rewrites the Parallel.For/ForEach loop to <c>await Parallel.ForAsync/ForEachAsync</c> with an async
/// body that takes the loop's token, awaits instead of blocking and passes the token to calls that accept one.
/// Offered when the enclosing function is async (or is a synchronous Main, which becomes async Task).
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(ParallelLoopToForEachAsyncFix))]
[Shared]
public sealed class ParallelLoopToForEachAsyncFix : CodeFixProvider
{
    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } =
        ImmutableArray.Create(DiagnosticIds.AsyncLambdaInParallelLoop, DiagnosticIds.BlockingWaitInParallelLoop);

    /// <summary>No fix-all: several diagnostics of one loop share one rewrite of that loop.</summary>
    /// <returns>Null.</returns>
    public override FixAllProvider? GetFixAllProvider() => null;

    /// <inheritdoc />
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        var root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        var model = await context.Document.GetSemanticModelAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null || model is null)
        {
            return;
        }

        var symbols = KnownSymbols.From(model.Compilation);
        foreach (var diagnostic in context.Diagnostics)
        {
            var loopLocation = diagnostic.AdditionalLocations.FirstOrDefault();
            if (loopLocation is null
                || root.FindNode(loopLocation.SourceSpan, getInnermostNodeForTie: true) is not InvocationExpressionSyntax loop)
            {
                continue;
            }

            var body = ParallelLoopConversion.ConvertibleBody(loop, model, symbols, context.CancellationToken);
            if (body is null)
            {
                continue;
            }

            var title = loop.Expression is MemberAccessExpressionSyntax { Name.Identifier.ValueText: "For" }
                ? "Use await Parallel.ForAsync"
                : "Use await Parallel.ForEachAsync";
            context.RegisterCodeFix(
                CodeAction.Create(
                    title,
                    cancellationToken => ParallelLoopConversion.ConvertAsync(context.Document, loop, body, cancellationToken),
                    equivalenceKey: nameof(ParallelLoopToForEachAsyncFix)),
                diagnostic);
        }
    }
}
