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

    /// <summary>
    /// Fix All rewrites each flagged loop once, however many diagnostics it has (several blocking waits in one body share
    /// one rewrite), one loop after another in each document: a batch merge of per-diagnostic rewrites would collide.
    /// </summary>
    /// <returns>A provider for document, project and solution scope.</returns>
    public override FixAllProvider GetFixAllProvider() => s_fixAll;

    private static readonly FixAllProvider s_fixAll = FixAllProvider.Create(FixAllInDocumentAsync);

    /// <summary>Rewrites every convertible loop named by <paramref name="diagnostics"/> in <paramref name="document"/>.</summary>
    private static async Task<Document?> FixAllInDocumentAsync(FixAllContext context, Document document, ImmutableArray<Diagnostic> diagnostics)
    {
        var root = await document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null)
        {
            return document;
        }

        // Mark each flagged loop once, so it can be found again after earlier rewrites moved the text around it.
        var loops = diagnostics
            .Select(d => d.AdditionalLocations.FirstOrDefault())
            .Where(l => l is not null && l.SourceTree == root.SyntaxTree)
            .Select(l => root.FindNode(l!.SourceSpan, getInnermostNodeForTie: true))
            .OfType<InvocationExpressionSyntax>()
            .Distinct()
            .ToList();
        var marks = loops.Select(_ => new SyntaxAnnotation(nameof(ParallelLoopToForEachAsyncFix))).ToList();
        var current = document.WithSyntaxRoot(root.ReplaceNodes(loops, (original, rewritten) => rewritten.WithAdditionalAnnotations(marks[loops.IndexOf(original)])));

        // Any order: a loop's rewrite keeps the marks of the loops inside or around it (syntax updates carry annotations).
        foreach (var mark in marks)
        {
            var currentRoot = await current.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
            var model = await current.GetSemanticModelAsync(context.CancellationToken).ConfigureAwait(false);
            if (currentRoot is null || model is null
                || currentRoot.GetAnnotatedNodes(mark).FirstOrDefault() is not InvocationExpressionSyntax loop)
            {
                continue;
            }

            var body = ParallelLoopConversion.ConvertibleBody(loop, model, KnownSymbols.From(model.Compilation), context.CancellationToken);
            if (body is not null)
            {
                current = await ParallelLoopConversion.ConvertAsync(current, loop, body, context.CancellationToken).ConfigureAwait(false);
            }
        }

        return current;
    }

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
