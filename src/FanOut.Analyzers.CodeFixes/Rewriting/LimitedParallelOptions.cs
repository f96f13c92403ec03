using System.Globalization;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Formatting;
using Microsoft.CodeAnalysis.Simplification;

using static Microsoft.CodeAnalysis.CSharp.SyntaxFactory;

namespace FanOut.Analyzers.CodeFixes.Rewriting;

/// <summary>Writes <c>new ParallelOptions { MaxDegreeOfParallelism = 50, ... }</c> for the fixes that add a limit.</summary>
internal static class LimitedParallelOptions
{
    /// <summary><c>MaxDegreeOfParallelism = 50</c>.</summary>
    public static AssignmentExpressionSyntax LimitAssignment() =>
        AssignmentExpression(
            SyntaxKind.SimpleAssignmentExpression,
            IdentifierName("MaxDegreeOfParallelism"),
            LiteralExpression(SyntaxKind.NumericLiteralExpression, Literal(LimitPlaceholder.Value.ToString(CultureInfo.InvariantCulture), LimitPlaceholder.Value)));

    /// <summary><c>new ParallelOptions { MaxDegreeOfParallelism = 50 }</c>, with <c>CancellationToken = token</c> when given.</summary>
    public static ObjectCreationExpressionSyntax Create(ExpressionSyntax? token = null)
    {
        var initializers = token is null
            ? SingletonSeparatedList<ExpressionSyntax>(LimitAssignment())
            : SeparatedList<ExpressionSyntax>([
                LimitAssignment(),
                AssignmentExpression(SyntaxKind.SimpleAssignmentExpression, IdentifierName("CancellationToken"), token.WithoutTrivia()),
            ]);
        return ObjectCreationExpression(
                ParseTypeName("System.Threading.Tasks.ParallelOptions").WithAdditionalAnnotations(Simplifier.Annotation),
                argumentList: null,
                InitializerExpression(SyntaxKind.ObjectInitializerExpression, initializers))
            .WithAdditionalAnnotations(Formatter.Annotation);
    }
}
