using System.Collections.Generic;
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
/// FO0003: rewrites <c>Task.WhenAll(source.Select(selector))</c>, or the loop form
/// <c>foreach (var x in source) tasks.Add(CallAsync(x)); await Task.WhenAll(tasks);</c>, to
/// <c>source.FanOutAsync(50, async (x, ct) =&gt; ...)</c> (at most 50 at once) or <c>source.FanOutAsync(async (x, ct) =&gt; ...)</c>
/// (the adaptive default) when the FanOut library is referenced (results kept, in order), otherwise, for result-less tasks,
/// to <c>Parallel.ForEachAsync</c> with a MaxDegreeOfParallelism of 50.
/// </summary>
/// <remarks>The loop form is fixed when the list is a local created empty just for it (<c>var tasks = new List&lt;Task&gt;();</c>)
/// and used nowhere else: the declaration and the loop go, and the WhenAll becomes the fan-out.</remarks>
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
            if (root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true) is not InvocationExpressionSyntax whenAll
                || model.GetOperation(whenAll, context.CancellationToken) is not IInvocationOperation operation
                || FanOutSource.Of(operation, diagnostic, model, symbols, context.CancellationToken) is null)
            {
                continue;
            }

            var keepsResults = symbols.IsTaskLikeWithResult(operation.TargetMethod.ReturnType);
            if (symbols.FanOutExtensions is not null)
            {
                context.RegisterCodeFix(
                    CodeAction.Create(
                        $"Use FanOutAsync with at most {LimitPlaceholder.Value} at once",
                        cancellationToken => RewriteAsync(context.Document, whenAll, diagnostic, Target.FanOutFixed, cancellationToken),
                        equivalenceKey: FixedKey),
                    diagnostic);
                context.RegisterCodeFix(
                    CodeAction.Create(
                        "Use FanOutAsync with its adaptive limit",
                        cancellationToken => RewriteAsync(context.Document, whenAll, diagnostic, Target.FanOutAdaptive, cancellationToken),
                        equivalenceKey: AdaptiveKey),
                    diagnostic);
            }
            else if (!keepsResults && symbols.ParallelOptions is not null && symbols.Parallel!.GetMembers("ForEachAsync").Length > 0)
            {
                context.RegisterCodeFix(
                    CodeAction.Create(
                        $"Use Parallel.ForEachAsync with MaxDegreeOfParallelism = {LimitPlaceholder.Value}",
                        cancellationToken => RewriteAsync(context.Document, whenAll, diagnostic, Target.Parallel, cancellationToken),
                        equivalenceKey: ParallelKey),
                    diagnostic);
            }
        }
    }

    /// <summary>The equivalence key of "FanOutAsync with at most 50 at once": <c>source.FanOutAsync(50, body)</c>.</summary>
    public const string FixedKey = nameof(WhenAllToBoundedFanOutFix) + ".FanOut";

    /// <summary>The equivalence key of "FanOutAsync with its adaptive limit": <c>source.FanOutAsync(body)</c>.</summary>
    public const string AdaptiveKey = nameof(WhenAllToBoundedFanOutFix) + ".FanOutAdaptive";

    /// <summary>The equivalence key of the Parallel.ForEachAsync rewrite (no FanOut reference, no results).</summary>
    public const string ParallelKey = nameof(WhenAllToBoundedFanOutFix) + ".Parallel";

    private enum Target
    {
        FanOutFixed,
        FanOutAdaptive,
        Parallel,
    }

    private static async Task<Document> RewriteAsync(Document document, InvocationExpressionSyntax whenAll, Diagnostic diagnostic, Target target, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null || model.GetOperation(whenAll, cancellationToken) is not IInvocationOperation operation
            || FanOutSource.Of(operation, diagnostic, model, KnownSymbols.From(model.Compilation), cancellationToken) is not { } found)
        {
            return document;
        }

        var symbols = KnownSymbols.From(model.Compilation);
        var token = TokenName.Unique(model, whenAll.SpanStart);
        var body = found.Loop is { } loop
            ? BodyFromLoop(loop, found.Added!, model, symbols, token, found.OuterTokens)
            : BodyFrom(OperationWalk.Unwrap(found.Select!.Arguments[1].Value), model, symbols, token, whenAll.SpanStart, found.OuterTokens);
        var source = found.Source;

        // The outer token the work used now cancels the whole fan-out; inside, the body's token replaces it (no FO0004).
        var outerToken = found.OuterToken?.WithoutTrivia();
        ExpressionSyntax replacement = target switch
        {
            // The short forms: FanOutAsync(limit, body[, token]) for a fixed limit, FanOutAsync(body[, cancellationToken: token])
            // for the adaptive default.
            Target.FanOutFixed => InvocationExpression(
                MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, Receiver(source), IdentifierName("FanOutAsync")),
                ArgumentList(SeparatedList(new[]
                {
                    Argument(LiteralExpression(SyntaxKind.NumericLiteralExpression, Literal(LimitPlaceholder.Value))),
                    Argument(body),
                }.Concat(outerToken is null ? [] : [Argument(outerToken)])))),
            Target.FanOutAdaptive => InvocationExpression(
                MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, Receiver(source), IdentifierName("FanOutAsync")),
                ArgumentList(SeparatedList(new[] { Argument(body) }.Concat(
                    outerToken is null ? [] : [Argument(NameColon(IdentifierName("cancellationToken")), default, outerToken)])))),
            _ => InvocationExpression(
                ParseExpression("System.Threading.Tasks.Parallel.ForEachAsync").WithAdditionalAnnotations(Simplifier.Annotation),
                ArgumentList(SeparatedList([
                    Argument(source.WithoutTrivia()),
                    Argument(LimitedParallelOptions.Create(outerToken)),
                    Argument(body),
                ]))),
        };
        replacement = replacement.WithTriviaFrom(whenAll).WithAdditionalAnnotations(Formatter.Annotation);

        SyntaxNode newRoot;
        if (found.Loop is { } removedLoop)
        {
            // The loop and the list's declaration go; the WhenAll becomes the fan-out.
            // At top level each statement sits in a GlobalStatementSyntax, which goes with it.
            var loopStatement = FanOutSource.Removable((StatementSyntax)removedLoop.Syntax);
            var declaration = FanOutSource.Removable(found.Declaration!);
            var awaiting = whenAll.FirstAncestorOrSelf<StatementSyntax>()!;
            newRoot = root.TrackNodes(whenAll, loopStatement, declaration, awaiting);
            newRoot = newRoot.ReplaceNode(newRoot.GetCurrentNode(whenAll)!, replacement);
            newRoot = newRoot.RemoveNodes([newRoot.GetCurrentNode(loopStatement)!, newRoot.GetCurrentNode(declaration)!], SyntaxRemoveOptions.KeepNoTrivia)!;

            // The blank line that set the WhenAll apart from the loop has nothing to set apart any more.
            var statement = newRoot.GetCurrentNode(awaiting)!;
            var leading = statement.GetLeadingTrivia();
            var blank = leading.TakeWhile(t => t.IsKind(SyntaxKind.WhitespaceTrivia) || t.IsKind(SyntaxKind.EndOfLineTrivia)).ToList();
            var lastEnd = blank.FindLastIndex(t => t.IsKind(SyntaxKind.EndOfLineTrivia));
            if (lastEnd >= 0)
            {
                newRoot = newRoot.ReplaceNode(statement, statement.WithLeadingTrivia(leading.Skip(lastEnd + 1)));
            }
        }
        else
        {
            newRoot = root.ReplaceNode(whenAll, replacement);
        }

        if (target != Target.Parallel && newRoot is CompilationUnitSyntax unit && !ImportsFanOut(unit, whenAll))
        {
            newRoot = unit.AddUsings(UsingDirective(ParseName(FanOutNamespace)).WithAdditionalAnnotations(Formatter.Annotation));
        }

        return document.WithSyntaxRoot(newRoot);
    }

    /// <summary>The FanOutAsync body <c>async (x, ct) =&gt; await Call(x, ct)</c> made from the loop's <c>tasks.Add(Call(x))</c>.</summary>
    private static ParenthesizedLambdaExpressionSyntax BodyFromLoop(IForEachLoopOperation loop, IInvocationOperation added, SemanticModel model, KnownSymbols symbols, string token, IReadOnlyList<ArgumentSyntax> outerTokens)
    {
        var statement = (ForEachStatementSyntax)loop.Syntax;
        var task = (ExpressionSyntax)added.Arguments[0].Value.Syntax;
        var call = (ExpressionSyntax)new AsyncBodyRewriter(model, symbols, token, outerTokens).Visit(task)!;
        var awaited = AwaitExpression(Token(SyntaxKind.AwaitKeyword).WithTrailingTrivia(Space), call.WithoutTrivia());
        var item = Parameter(statement.Identifier.WithoutTrivia());
        if (!statement.Type.IsVar)
        {
            item = item.WithType(statement.Type.WithoutTrivia().WithTrailingTrivia(Space));
        }

        return ParallelLoopConversion.AsyncLambda(
            ParenthesizedLambdaExpression(ParameterList(SingletonSeparatedList(item)), awaited)
                .WithArrowToken(Token(SyntaxKind.EqualsGreaterThanToken).WithLeadingTrivia(Space).WithTrailingTrivia(Space)),
            token,
            awaited);
    }

    /// <summary>The FanOutAsync body <c>async (item, ct) =&gt; ...</c> made from a Select selector.</summary>
    private static ParenthesizedLambdaExpressionSyntax BodyFrom(IOperation selector, SemanticModel model, KnownSymbols symbols, string token, int position, IReadOnlyList<ArgumentSyntax> outerTokens)
    {
        var rewriter = new AsyncBodyRewriter(model, symbols, token, outerTokens);
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
