using System.Collections.Generic;
using System.Linq;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;

using static Microsoft.CodeAnalysis.CSharp.SyntaxFactory;

namespace FanOut.Analyzers.CodeFixes.Rewriting;

/// <summary>
/// Rewrites a loop body for an async loop: blocking waits become <c>await</c>, Task.WaitAll/WaitAny become awaited
/// WhenAll/WhenAny, calls that can take a cancellation token get the body's token, and so do the calls given a token
/// from outside the body (when the caller names them). Reads the original tree's
/// semantic model, so it must visit nodes of that tree.
/// </summary>
internal sealed class AsyncBodyRewriter : CSharpSyntaxRewriter
{
    private readonly SemanticModel _model;
    private readonly KnownSymbols _symbols;
    private readonly string _token;

    /// <summary>Token arguments from outside the body, each replaced by the body's token.</summary>
    private readonly HashSet<ArgumentSyntax> _outerTokens;

    public AsyncBodyRewriter(SemanticModel model, KnownSymbols symbols, string token, IEnumerable<ArgumentSyntax>? outerTokens = null)
    {
        _model = model;
        _symbols = symbols;
        _token = token;
        _outerTokens = [.. outerTokens ?? []];
    }

    public override SyntaxNode? VisitArgument(ArgumentSyntax node) =>
        _outerTokens.Contains(node)
            ? node.WithExpression(IdentifierName(_token).WithTriviaFrom(node.Expression))
            : base.VisitArgument(node);

    /// <summary>Whether a fix can rewrite this wait: <c>.Wait()</c> only without a timeout or token.</summary>
    public static bool CanRewrite(IOperation wait, KnownSymbols symbols) =>
        BlockingWait.Describe(wait, symbols) is { } kind
        && (kind != ".Wait()" || wait is IInvocationOperation { Arguments.Length: 0 });

    public override SyntaxNode? VisitMemberAccessExpression(MemberAccessExpressionSyntax node)
    {
        var visited = (MemberAccessExpressionSyntax)base.VisitMemberAccessExpression(node)!;
        return node.Name.Identifier.ValueText == "Result"
            && _model.GetOperation(node) is IPropertyReferenceOperation result
            && BlockingWait.Describe(result, _symbols) is not null
            ? AwaitOf(visited.Expression, node)
            : visited;
    }

    public override SyntaxNode? VisitInvocationExpression(InvocationExpressionSyntax node)
    {
        var operation = _model.GetOperation(node) as IInvocationOperation;
        var visited = (InvocationExpressionSyntax)base.VisitInvocationExpression(node)!;
        if (operation is null)
        {
            return visited;
        }

        if (CanRewrite(operation, _symbols) && visited.Expression is MemberAccessExpressionSyntax access)
        {
            switch (BlockingWait.Describe(operation, _symbols))
            {
                case ".Wait()":
                    return AwaitOf(access.Expression, node);
                case ".GetAwaiter().GetResult()" when access.Expression is InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax getAwaiter }:
                    return AwaitOf(getAwaiter.Expression, node);
                case "Task.WaitAll":
                    return AwaitOf(visited.WithExpression(access.WithName(IdentifierName("WhenAll"))), node);
                case "Task.WaitAny":
                    return AwaitOf(visited.WithExpression(access.WithName(IdentifierName("WhenAny"))), node);
            }
        }

        return WithToken(visited, operation, node.SpanStart);
    }

    /// <summary><c>await expression</c> with the trivia of the node it replaces, in parentheses where a postfix follows.</summary>
    private static ExpressionSyntax AwaitOf(ExpressionSyntax expression, ExpressionSyntax replaced)
    {
        ExpressionSyntax awaited = AwaitExpression(
            Token(SyntaxKind.AwaitKeyword).WithTrailingTrivia(Space),
            expression.WithoutTrivia());
        if (replaced.Parent is MemberAccessExpressionSyntax or ElementAccessExpressionSyntax or ConditionalAccessExpressionSyntax
            or InvocationExpressionSyntax or PostfixUnaryExpressionSyntax)
        {
            awaited = ParenthesizedExpression(awaited);
        }

        return awaited.WithTriviaFrom(replaced);
    }

    /// <summary>The call with the body's token added, when the method or an overload takes one it does not get today.</summary>
    private InvocationExpressionSyntax WithToken(InvocationExpressionSyntax call, IInvocationOperation operation, int position)
    {
        var arguments = operation.Arguments;
        if (arguments.Any(argument => argument.ArgumentKind != ArgumentKind.DefaultValue && _symbols.IsCancellationToken(argument.Parameter?.Type)))
        {
            return call;
        }

        var token = IdentifierName(_token);
        var optional = arguments.FirstOrDefault(argument => argument.ArgumentKind == ArgumentKind.DefaultValue
            && _symbols.IsCancellationToken(argument.Parameter?.Type));
        if (optional?.Parameter is { } parameter)
        {
            var given = arguments.Count(static argument => argument.ArgumentKind != ArgumentKind.DefaultValue);
            var positional = given == parameter.Ordinal && call.ArgumentList.Arguments.All(static argument => argument.NameColon is null);
            var added = positional ? Argument(token) : Argument(NameColon(IdentifierName(parameter.Name)), default, token);
            return call.AddArgumentListArguments(added);
        }

        var hasNamedArguments = call.ArgumentList.Arguments.Any(static argument => argument.NameColon is not null);
        var hasParamsArray = arguments.Any(static argument => argument.ArgumentKind == ArgumentKind.ParamArray);
        return !hasNamedArguments && !hasParamsArray
            && TokenOverloads.WithTrailingToken(operation.TargetMethod, _symbols, _model, position) is not null
            ? call.AddArgumentListArguments(Argument(token))
            : call;
    }
}
