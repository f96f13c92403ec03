using System.Collections.Generic;
using System.Collections.Immutable;
using System.Composition;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

using FanOut.Analyzers.CodeFixes.Rewriting;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Syntax;

using static Microsoft.CodeAnalysis.CSharp.SyntaxFactory;

namespace FanOut.Analyzers.CodeFixes;

/// <summary>FO0004: passes the body's own token instead of the outer one (naming a discarded token parameter first).</summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(OuterTokenToBodyTokenFix))]
[Shared]
public sealed class OuterTokenToBodyTokenFix : CodeFixProvider
{
    private const string Discard = "_";

    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } =
        ImmutableArray.Create(DiagnosticIds.OuterTokenInLoopBody);

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
            var parameterLocation = diagnostic.AdditionalLocations.FirstOrDefault();
            if (parameterLocation is null
                || root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not ExpressionSyntax outer
                || root.FindNode(parameterLocation.SourceSpan) is not ParameterSyntax parameter)
            {
                continue;
            }

            context.RegisterCodeFix(
                CodeAction.Create(
                    "Use the body's cancellation token",
                    cancellationToken => UseBodyTokenAsync(context.Document, outer, parameter, cancellationToken),
                    equivalenceKey: nameof(OuterTokenToBodyTokenFix)),
                diagnostic);
        }
    }

    private static async Task<Document> UseBodyTokenAsync(Document document, ExpressionSyntax outer, ParameterSyntax parameter, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null)
        {
            return document;
        }

        var name = parameter.Identifier.ValueText;
        var replacements = new Dictionary<SyntaxNode, SyntaxNode>();
        if (name == Discard)
        {
            name = TokenName.Unique(model, parameter.SpanStart);
            replacements[parameter] = parameter.WithIdentifier(Identifier(name).WithTriviaFrom(parameter.Identifier));
        }

        replacements[outer] = IdentifierName(name).WithTriviaFrom(outer);
        return document.WithSyntaxRoot(root.ReplaceNodes(replacements.Keys, (original, _) => replacements[original]));
    }
}
