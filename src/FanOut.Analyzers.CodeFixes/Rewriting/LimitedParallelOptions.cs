using System.Globalization;
using System.Linq;

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

    /// <summary>Whether the options <paramref name="creation"/> writes set MaxDegreeOfParallelism.</summary>
    public static bool SetsLimit(BaseObjectCreationExpressionSyntax creation) =>
        creation.Initializer?.Expressions.OfType<AssignmentExpressionSyntax>()
            .Any(static assignment => assignment.Left is IdentifierNameSyntax { Identifier.ValueText: "MaxDegreeOfParallelism" }) == true;

    /// <summary><paramref name="creation"/> with <c>MaxDegreeOfParallelism = 50</c> first in its initializer.</summary>
    public static BaseObjectCreationExpressionSyntax WithLimit(BaseObjectCreationExpressionSyntax creation)
    {
        var limit = LimitAssignment();
        var initializer = creation.Initializer is { } existing
            ? existing.WithExpressions(existing.Expressions.Insert(0, limit))
            : InitializerExpression(SyntaxKind.ObjectInitializerExpression, SingletonSeparatedList<ExpressionSyntax>(limit));
        return creation.WithInitializer(initializer).WithAdditionalAnnotations(Formatter.Annotation);
    }
}
