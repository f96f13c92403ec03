using System.Collections.Immutable;
using System.Linq;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;
using Microsoft.CodeAnalysis.Text;

namespace FanOut.Analyzers;

/// <summary>
/// FO0004: inside a Parallel.ForEachAsync/ForAsync or FanOutAsync/FanOutStream body, a cancellation token from outside
/// the lambda passed where the body's own token is in scope.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class OuterTokenInLoopBodyAnalyzer : DiagnosticAnalyzer
{
    /// <inheritdoc />
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } =
        ImmutableArray.Create(FanOutDiagnostics.OuterTokenInLoopBody);

    /// <inheritdoc />
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterInvocationAnalysis(static symbols => symbols.CancellationToken is not null, Analyze);
    }

    private static void Analyze(OperationAnalysisContext context, KnownSymbols symbols)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (!symbols.IsLoopWithBodyToken(invocation.TargetMethod))
        {
            return;
        }

        foreach (var argument in invocation.Arguments)
        {
            if (OperationWalk.LambdaOf(argument.Value) is not { } body
                || body.Symbol.Parameters.LastOrDefault() is not { } token
                || !symbols.IsCancellationToken(token.Type)
                || body.Syntax is not LambdaExpressionSyntax lambda)
            {
                continue;
            }

            var tokenSyntax = TokenParameterSyntax(lambda);
            foreach (var call in OperationWalk.DescendantsInSameFunction(body.Body).OfType<IArgumentOperation>())
            {
                if (IsOuterToken(call, token, lambda.Span, symbols))
                {
                    context.ReportDiagnostic(Diagnostic.Create(
                        FanOutDiagnostics.OuterTokenInLoopBody,
                        call.Value.Syntax.GetLocation(),
                        additionalLocations: tokenSyntax is null ? null : [tokenSyntax.GetLocation()],
                        token.Name,
                        call.Value.Syntax.ToString()));
                }
            }
        }
    }

    private static ParameterSyntax? TokenParameterSyntax(LambdaExpressionSyntax lambda) => lambda switch
    {
        ParenthesizedLambdaExpressionSyntax parenthesized => parenthesized.ParameterList.Parameters.LastOrDefault(),
        SimpleLambdaExpressionSyntax simple => simple.Parameter,
        _ => null,
    };

    /// <summary>
    /// Whether <paramref name="argument"/> passes a token built only from symbols declared outside the lambda, to a call
    /// that does not also get the body's token (a linked token source made from both is fine).
    /// </summary>
    private static bool IsOuterToken(IArgumentOperation argument, IParameterSymbol bodyToken, TextSpan lambdaSpan, KnownSymbols symbols)
    {
        var value = OperationWalk.Unwrap(argument.Value);
        if (!symbols.IsCancellationToken(value.Type) || argument.ArgumentKind == ArgumentKind.DefaultValue)
        {
            return false;
        }

        var references = new[] { value }.Concat(value.ChildOperations.SelectMany(static child => child.DescendantsAndSelf())).ToList();
        var usesOuterSymbol = false;
        foreach (var reference in references)
        {
            var symbol = SymbolOf(reference);
            if (symbol is null)
            {
                continue;
            }

            if (SymbolEqualityComparer.Default.Equals(symbol, bodyToken) || IsDeclaredInside(symbol, lambdaSpan))
            {
                return false;
            }

            usesOuterSymbol = true;
        }

        return usesOuterSymbol && !SiblingArgumentsUse(argument, bodyToken);
    }

    private static ISymbol? SymbolOf(IOperation operation) => operation switch
    {
        ILocalReferenceOperation local => local.Local,
        IParameterReferenceOperation parameter => parameter.Parameter,
        IFieldReferenceOperation field => field.Field,
        // CancellationToken.None is no token at all, not an outer one.
        IPropertyReferenceOperation { Instance: null, Property.Name: "None" } => null,
        IPropertyReferenceOperation { Instance: null } property => property.Property,
        IPropertyReferenceOperation { Instance: IInstanceReferenceOperation } property => property.Property,
        _ => null,
    };

    private static bool IsDeclaredInside(ISymbol symbol, TextSpan lambdaSpan) =>
        symbol is ILocalSymbol or IParameterSymbol
        && symbol.DeclaringSyntaxReferences.Any(reference => lambdaSpan.Contains(reference.Span));

    private static bool SiblingArgumentsUse(IArgumentOperation argument, IParameterSymbol bodyToken) =>
        argument.Parent is IInvocationOperation or IObjectCreationOperation
        && argument.Parent.ChildOperations.OfType<IArgumentOperation>()
            .Where(sibling => sibling != argument)
            .SelectMany(static sibling => sibling.DescendantsAndSelf())
            .OfType<IParameterReferenceOperation>()
            .Any(reference => SymbolEqualityComparer.Default.Equals(reference.Parameter, bodyToken));
}
