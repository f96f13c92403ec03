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
using Microsoft.CodeAnalysis.Simplification;

using static Microsoft.CodeAnalysis.CSharp.SyntaxFactory;

namespace FanOut.Analyzers.CodeFixes;

/// <summary>
/// FO0003: rewrites <c>Task.WhenAll(source.Select(selector))</c> to <c>source.FanOutAsync((item, ct) =&gt; ..., new
/// FanOutOptions { Limit = ConcurrencyLimit.Fixed(50) })</c> when the FanOut library is referenced (results kept, in
/// order), otherwise, for result-less tasks, to <c>Parallel.ForEachAsync</c> with a MaxDegreeOfParallelism of 50.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(WhenAllToBoundedFanOutFix))]
[Shared]
public sealed class WhenAllToBoundedFanOutFix : CodeFixProvider
{
    private const string FanOutNamespace = "FanOut";

    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } =
        ImmutableArray.Create(DiagnosticIds.UnboundedWhenAll);

    /// <inheritdoc />
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

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
            if (!diagnostic.Properties.TryGetValue(UnboundedWhenAllAnalyzer.InlineProjectionProperty, out var inline) || inline != "true"
                || root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not InvocationExpressionSyntax whenAll
                || model.GetOperation(whenAll, context.CancellationToken) is not IInvocationOperation operation
                || ProjectionSource.FindSelect(operation.Arguments[0].Value, symbols, out _) is not { } select
                || !CanMoveSelector(select.Arguments[1].Value))
            {
                continue;
            }

            var keepsResults = symbols.IsTaskLikeWithResult(operation.TargetMethod.ReturnType);
            if (symbols.FanOutExtensions is not null)
            {
                context.RegisterCodeFix(
                    CodeAction.Create(
                        $"Use FanOutAsync with ConcurrencyLimit.Fixed({LimitPlaceholder.Value})",
                        cancellationToken => RewriteAsync(context.Document, whenAll, useFanOut: true, cancellationToken),
                        equivalenceKey: nameof(WhenAllToBoundedFanOutFix) + ".FanOut"),
                    diagnostic);
            }
            else if (!keepsResults && symbols.ParallelOptions is not null && symbols.Parallel!.GetMembers("ForEachAsync").Length > 0)
            {
                context.RegisterCodeFix(
                    CodeAction.Create(
                        $"Use Parallel.ForEachAsync with MaxDegreeOfParallelism = {LimitPlaceholder.Value}",
                        cancellationToken => RewriteAsync(context.Document, whenAll, useFanOut: false, cancellationToken),
                        equivalenceKey: nameof(WhenAllToBoundedFanOutFix) + ".Parallel"),
                    diagnostic);
            }
        }
    }

    /// <summary>A one-parameter lambda (async, or expression-bodied) or a one-parameter method group.</summary>
    private static bool CanMoveSelector(IOperation selector) => OperationWalk.Unwrap(selector) switch
    {
        IDelegateCreationOperation { Target: IAnonymousFunctionOperation { Symbol.Parameters.Length: 1 } lambda } =>
            lambda.Symbol.IsAsync || lambda.Syntax is LambdaExpressionSyntax { ExpressionBody: not null },
        IDelegateCreationOperation { Target: IMethodReferenceOperation { Method.Parameters.Length: 1 } } => true,
        _ => false,
    };

    private static async Task<Document> RewriteAsync(Document document, InvocationExpressionSyntax whenAll, bool useFanOut, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null || model.GetOperation(whenAll, cancellationToken) is not IInvocationOperation operation)
        {
            return document;
        }

        var symbols = KnownSymbols.From(model.Compilation);
        var select = ProjectionSource.FindSelect(operation.Arguments[0].Value, symbols, out _)!;
        var source = (ExpressionSyntax)OperationWalk.Unwrap(select.Arguments[0].Value).Syntax;
        var token = TokenName.Unique(model, whenAll.SpanStart);
        var body = BodyFrom(OperationWalk.Unwrap(select.Arguments[1].Value), model, symbols, token, whenAll.SpanStart);

        ExpressionSyntax replacement = useFanOut
            ? InvocationExpression(
                MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, Receiver(source), IdentifierName("FanOutAsync")),
                ArgumentList(SeparatedList([
                    Argument(body),
                    Argument(ParseExpression($"new FanOutOptions {{ Limit = ConcurrencyLimit.Fixed({LimitPlaceholder.Value}) }}")),
                ])))
            : InvocationExpression(
                ParseExpression("System.Threading.Tasks.Parallel.ForEachAsync").WithAdditionalAnnotations(Simplifier.Annotation),
                ArgumentList(SeparatedList([
                    Argument(source.WithoutTrivia()),
                    Argument(LimitedParallelOptions.Create()),
                    Argument(body),
                ])));
        replacement = replacement.WithTriviaFrom(whenAll).WithAdditionalAnnotations(Formatter.Annotation);

        var newRoot = root.ReplaceNode(whenAll, replacement);
        if (useFanOut && newRoot is CompilationUnitSyntax unit && !ImportsFanOut(unit, whenAll))
        {
            newRoot = unit.AddUsings(UsingDirective(ParseName(FanOutNamespace)).WithAdditionalAnnotations(Formatter.Annotation));
        }

        return document.WithSyntaxRoot(newRoot);
    }

    /// <summary>The FanOutAsync body <c>async (item, ct) =&gt; ...</c> made from a Select selector.</summary>
    private static ParenthesizedLambdaExpressionSyntax BodyFrom(IOperation selector, SemanticModel model, KnownSymbols symbols, string token, int position)
    {
        var rewriter = new AsyncBodyRewriter(model, symbols, token);
        var creation = (IDelegateCreationOperation)selector;
        if (creation.Target is IAnonymousFunctionOperation { Syntax: LambdaExpressionSyntax lambda } function)
        {
            var newBody = (CSharpSyntaxNode)rewriter.Visit(lambda.Body)!;
            if (!function.Symbol.IsAsync)
            {
                newBody = AwaitExpression(Token(SyntaxKind.AwaitKeyword).WithTrailingTrivia(Space), (ExpressionSyntax)newBody.WithoutTrivia())
                    .WithTriviaFrom(newBody);
            }

            return ParallelLoopConversion.AsyncLambda(lambda, token, newBody);
        }

        // A method group: call it with the item, and with the token when an overload takes one.
        var reference = (IMethodReferenceOperation)creation.Target;
        var call = InvocationExpression((ExpressionSyntax)reference.Syntax.WithoutTrivia(), ArgumentList(SingletonSeparatedList(Argument(IdentifierName("item")))));
        if (TokenOverloads.WithTrailingToken(reference.Method, symbols, model, position) is not null)
        {
            call = call.AddArgumentListArguments(Argument(IdentifierName(token)));
        }

        var awaited = AwaitExpression(Token(SyntaxKind.AwaitKeyword).WithTrailingTrivia(Space), call);
        return ParallelLoopConversion.AsyncLambda(
            SimpleLambdaExpression(Parameter(Identifier("item"))).WithArrowToken(Token(SyntaxKind.EqualsGreaterThanToken).WithLeadingTrivia(Space).WithTrailingTrivia(Space)),
            token,
            awaited);
    }

    /// <summary>The source as the receiver of an extension call, parenthesized unless it is a simple primary expression.</summary>
    private static ExpressionSyntax Receiver(ExpressionSyntax source)
    {
        var bare = source.WithoutTrivia();
        return bare is IdentifierNameSyntax or MemberAccessExpressionSyntax or InvocationExpressionSyntax or ElementAccessExpressionSyntax
            or ParenthesizedExpressionSyntax or ThisExpressionSyntax
            ? bare
            : ParenthesizedExpression(bare);
    }

    private static bool ImportsFanOut(CompilationUnitSyntax unit, SyntaxNode node) =>
        unit.Usings.Any(static directive => directive.Name?.ToString() == FanOutNamespace)
        || node.Ancestors().OfType<BaseNamespaceDeclarationSyntax>().Any(static ns =>
            ns.Name.ToString() == FanOutNamespace || ns.Name.ToString().StartsWith(FanOutNamespace + ".", System.StringComparison.Ordinal)
            || ns.Usings.Any(static directive => directive.Name?.ToString() == FanOutNamespace));
}
