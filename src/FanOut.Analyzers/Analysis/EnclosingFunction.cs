using System.Linq;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace FanOut.Analyzers.Analysis;

/// <summary>What the function around a statement allows: whether an <c>await</c> can be written there.</summary>
internal static class EnclosingFunction
{
    /// <summary>The nearest method, local function, lambda or top-level statement around <paramref name="node"/>.</summary>
    public static SyntaxNode? Of(SyntaxNode node) =>
        node.Ancestors().FirstOrDefault(static ancestor => ancestor is AnonymousFunctionExpressionSyntax
            or LocalFunctionStatementSyntax
            or BaseMethodDeclarationSyntax
            or AccessorDeclarationSyntax
            or GlobalStatementSyntax);

    /// <summary>Whether an <c>await</c> may be written at <paramref name="node"/> as the code stands.</summary>
    public static bool IsAsync(SyntaxNode node) => Of(node) switch
    {
        AnonymousFunctionExpressionSyntax lambda => lambda.AsyncKeyword.IsKind(SyntaxKind.AsyncKeyword),
        LocalFunctionStatementSyntax local => local.Modifiers.Any(SyntaxKind.AsyncKeyword),
        MethodDeclarationSyntax method => method.Modifiers.Any(SyntaxKind.AsyncKeyword),
        GlobalStatementSyntax => true,
        _ => false,
    };

    /// <summary>
    /// Whether <paramref name="node"/> sits in a synchronous <c>static void Main</c> or <c>static int Main</c>, which can
    /// become <c>async Task</c> without changing any caller.
    /// </summary>
    public static bool IsSynchronousMain(SyntaxNode node, SemanticModel model) =>
        Of(node) is MethodDeclarationSyntax method
        && !method.Modifiers.Any(SyntaxKind.AsyncKeyword)
        && method.Identifier.ValueText == "Main"
        && model.GetDeclaredSymbol(method) is { IsStatic: true } symbol
        && (symbol.ReturnsVoid || symbol.ReturnType.SpecialType == SpecialType.System_Int32);

    /// <summary>Whether a code fix can put an <c>await</c> at <paramref name="node"/>.</summary>
    public static bool CanBecomeAsync(SyntaxNode node, SemanticModel model) => IsAsync(node) || IsSynchronousMain(node, model);
}
