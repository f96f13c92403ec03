using System.Collections.Immutable;
using System.Composition;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

using FanOut.Analyzers.Analysis;
using FanOut.Analyzers.CodeFixes.Rewriting;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Formatting;
using Microsoft.CodeAnalysis.Operations;

using static Microsoft.CodeAnalysis.CSharp.SyntaxFactory;

namespace FanOut.Analyzers.CodeFixes;

/// <summary>FO0005: gives Parallel.ForEachAsync/ForAsync an explicit MaxDegreeOfParallelism (50, to be tuned).</summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(ExplicitLimitFix))]
[Shared]
public sealed class ExplicitLimitFix : CodeFixProvider
{
    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } =
        ImmutableArray.Create(DiagnosticIds.DefaultLimitForIo);

    /// <inheritdoc />
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc />
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        var root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        if (root is null)
        {
            return;
        }

        foreach (var diagnostic in context.Diagnostics)
        {
            var loop = root.FindNode(diagnostic.Location.SourceSpan).FirstAncestorOrSelf<InvocationExpressionSyntax>();
            if (loop is null)
            {
                continue;
            }

            context.RegisterCodeFix(
                CodeAction.Create(
                    $"Set MaxDegreeOfParallelism = {LimitPlaceholder.Value}",
                    cancellationToken => AddLimitAsync(context.Document, loop, cancellationToken),
                    equivalenceKey: nameof(ExplicitLimitFix)),
                diagnostic);
        }
    }

    private static async Task<Document> AddLimitAsync(Document document, InvocationExpressionSyntax loop, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null || model.GetOperation(loop, cancellationToken) is not IInvocationOperation operation)
        {
            return document;
        }

        var symbols = KnownSymbols.From(model.Compilation);
        var options = operation.Arguments.FirstOrDefault(argument => KnownSymbols.Is(argument.Parameter?.Type, symbols.ParallelOptions));
        var token = operation.Arguments.FirstOrDefault(argument => symbols.IsCancellationToken(argument.Parameter?.Type));
        SyntaxNode newLoop;
        if (options is not null && OperationWalk.Unwrap(options.Value).Syntax is BaseObjectCreationExpressionSyntax creation)
        {
            // Options without a limit: add the limit first in their initializer.
            newLoop = loop.ReplaceNode(creation, LimitedParallelOptions.WithLimit(creation));
        }
        else if (token?.Syntax is ArgumentSyntax tokenArgument)
        {
            // The (source, token, body) overload: the token moves into the options.
            var newOptions = LimitedParallelOptions.Create(tokenArgument.Expression).WithTriviaFrom(tokenArgument.Expression);
            newLoop = loop.ReplaceNode(tokenArgument, tokenArgument.WithExpression(newOptions));
        }
        else
        {
            var bodyIndex = loop.ArgumentList.Arguments.Count - 1;
            newLoop = loop.WithArgumentList(loop.ArgumentList.WithArguments(
                loop.ArgumentList.Arguments.Insert(bodyIndex, Argument(LimitedParallelOptions.Create()))));
        }

        return document.WithSyntaxRoot(root.ReplaceNode(loop, newLoop));
    }
}
