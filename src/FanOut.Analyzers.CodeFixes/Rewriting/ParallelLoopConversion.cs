using System.Linq;
using System.Threading;
using System.Threading.Tasks;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;
using Microsoft.CodeAnalysis.Simplification;

using static Microsoft.CodeAnalysis.CSharp.SyntaxFactory;

namespace FanOut.Analyzers.CodeFixes.Rewriting;

/// <summary>
/// Turns <c>Parallel.ForEach(source, [options,] item =&gt; ...)</c> into
/// <c>await Parallel.ForEachAsync(source, options, async (item, ct) =&gt; ...)</c> (and Parallel.For into ForAsync), the
/// options given a MaxDegreeOfParallelism of 50 when they have none: the shared rewrite of FO0001 and FO0002.
/// </summary>
internal static class ParallelLoopConversion
{
    /// <summary>
    /// The loop's body lambda when the loop can be converted: a statement of its own, one-parameter body, an enclosing
    /// function that is (or, for Main, can become) async, and ForAsync present for Parallel.For. Null otherwise.
    /// </summary>
    public static LambdaExpressionSyntax? ConvertibleBody(InvocationExpressionSyntax loop, SemanticModel model, KnownSymbols symbols, CancellationToken cancellationToken)
    {
        if (loop.Parent is not ExpressionStatementSyntax
            || loop.Expression is not MemberAccessExpressionSyntax
            || model.GetOperation(loop, cancellationToken) is not IInvocationOperation operation
            || !EnclosingFunction.CanBecomeAsync(loop, model))
        {
            return null;
        }

        var method = operation.TargetMethod;
        var hasAsyncTwin = method.Name switch
        {
            "ForEach" => true,
            "For" => symbols.Parallel!.GetMembers("ForAsync").Length > 0,
            _ => false,
        };
        var body = operation.Arguments.LastOrDefault();
        if (!hasAsyncTwin || body is null || OperationWalk.LambdaOf(body.Value) is not { Symbol.Parameters.Length: 1 } lambda
            || lambda.Syntax is not LambdaExpressionSyntax syntax)
        {
            return null;
        }

        // Every other argument must be the source, the bounds or a ParallelOptions: the async twins take nothing else.
        var others = operation.Arguments.Take(operation.Arguments.Length - 1).ToList();
        // A ForEach source must be an IEnumerable<T>: ForEachAsync takes no Partitioner.
        var optionsOk = others.All(argument => KnownSymbols.Is(argument.Parameter?.Type, symbols.ParallelOptions)
            || (method.Name == "For" && argument.Parameter?.Ordinal < 2)
            || (argument.Parameter?.Ordinal == 0
                && argument.Parameter.Type.OriginalDefinition.SpecialType == SpecialType.System_Collections_Generic_IEnumerable_T));
        var waitsOk = OperationWalk.DescendantsInSameFunction(lambda.Body)
            .All(inner => BlockingWait.Describe(inner, symbols) is null || AsyncBodyRewriter.CanRewrite(inner, symbols));
        return optionsOk && waitsOk ? syntax : null;
    }

    /// <summary>The document with the loop rewritten; <paramref name="body"/> comes from <see cref="ConvertibleBody"/>.</summary>
    public static async Task<Document> ConvertAsync(Document document, InvocationExpressionSyntax loop, LambdaExpressionSyntax body, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var model = await document.GetSemanticModelAsync(cancellationToken).ConfigureAwait(false);
        if (root is null || model is null)
        {
            return document;
        }

        var symbols = KnownSymbols.From(model.Compilation);
        var token = TokenName.Unique(model, body.Body.SpanStart);
        var newBody = (CSharpSyntaxNode)new AsyncBodyRewriter(model, symbols, token).Visit(body.Body)!;
        var newLambda = AsyncLambda(body, token, newBody);

        var access = (MemberAccessExpressionSyntax)loop.Expression;
        var asyncName = access.Name.Identifier.ValueText + "Async";

        // The async twins default to ProcessorCount at once, a limit for CPU work (FO0005): the rewrite writes one to tune.
        var options = (model.GetOperation(loop, cancellationToken) as IInvocationOperation)?.Arguments
            .FirstOrDefault(argument => KnownSymbols.Is(argument.Parameter?.Type, symbols.ParallelOptions));
        var optionsCreation = options is null ? null : OperationWalk.Unwrap(options.Value).Syntax as BaseObjectCreationExpressionSyntax;
        var newLoop = loop.ReplaceNodes(
            new SyntaxNode?[] { body, optionsCreation is not null && !LimitedParallelOptions.SetsLimit(optionsCreation) ? optionsCreation : null }.OfType<SyntaxNode>(),
            (original, _) => original == body ? newLambda : LimitedParallelOptions.WithLimit((BaseObjectCreationExpressionSyntax)original));
        if (options is null)
        {
            newLoop = newLoop.WithArgumentList(newLoop.ArgumentList.WithArguments(
                newLoop.ArgumentList.Arguments.Insert(newLoop.ArgumentList.Arguments.Count - 1, Argument(LimitedParallelOptions.Create()))));
        }

        newLoop = newLoop.WithExpression(access.WithName(access.Name.WithIdentifier(Identifier(asyncName))));
        var awaited = AwaitExpression(Token(SyntaxKind.AwaitKeyword).WithTrailingTrivia(Space), newLoop.WithoutLeadingTrivia())
            .WithLeadingTrivia(loop.GetLeadingTrivia());

        var enclosing = EnclosingFunction.Of(loop);
        if (!EnclosingFunction.IsAsync(loop) && enclosing is MethodDeclarationSyntax main)
        {
            var newMain = main.ReplaceNode(loop, awaited);
            newMain = MakeAsync(newMain);
            return document.WithSyntaxRoot(root.ReplaceNode(main, newMain));
        }

        return document.WithSyntaxRoot(root.ReplaceNode(loop, awaited));
    }

    /// <summary><c>async (item, ct) =&gt; body</c> from a one-parameter lambda, keeping an explicit parameter type.</summary>
    public static ParenthesizedLambdaExpressionSyntax AsyncLambda(LambdaExpressionSyntax original, string token, CSharpSyntaxNode body)
    {
        var item = original switch
        {
            SimpleLambdaExpressionSyntax simple => simple.Parameter,
            ParenthesizedLambdaExpressionSyntax parenthesized => parenthesized.ParameterList.Parameters[0],
            _ => Parameter(Identifier("item")),
        };
        var tokenParameter = Parameter(Identifier(token));
        if (item.Type is not null)
        {
            tokenParameter = tokenParameter.WithType(
                ParseTypeName("System.Threading.CancellationToken").WithAdditionalAnnotations(Simplifier.Annotation).WithTrailingTrivia(Space));
        }

        var parameters = ParameterList(SeparatedList(
            [item.WithoutTrivia(), tokenParameter],
            [Token(SyntaxKind.CommaToken).WithTrailingTrivia(Space)]));
        return ParenthesizedLambdaExpression(
                Token(SyntaxKind.AsyncKeyword).WithTrailingTrivia(Space),
                parameters.WithTrailingTrivia(Space),
                original.ArrowToken,
                body)
            .WithTriviaFrom(original);
    }

    private static MethodDeclarationSyntax MakeAsync(MethodDeclarationSyntax method)
    {
        var returnType = method.ReturnType is PredefinedTypeSyntax { Keyword.RawKind: (int)SyntaxKind.VoidKeyword }
            ? "System.Threading.Tasks.Task"
            : "System.Threading.Tasks.Task<int>";
        var newType = ParseTypeName(returnType).WithAdditionalAnnotations(Simplifier.Annotation).WithTriviaFrom(method.ReturnType);
        var asyncKeyword = Token(SyntaxKind.AsyncKeyword).WithTrailingTrivia(Space);
        return method.WithReturnType(newType).WithModifiers(method.Modifiers.Add(asyncKeyword));
    }
}
