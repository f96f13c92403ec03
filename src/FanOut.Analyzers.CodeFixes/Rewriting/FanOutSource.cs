using System.Linq;
using System.Threading;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers.CodeFixes.Rewriting;

/// <summary>What FO0003's fix fans out: the source, and the selector or the loop that made one task per item.</summary>
internal sealed class FanOutSource
{
    private FanOutSource(ExpressionSyntax source, IInvocationOperation? select, IForEachLoopOperation? loop, IInvocationOperation? added, LocalDeclarationStatementSyntax? declaration)
    {
        Source = source;
        Select = select;
        Loop = loop;
        Added = added;
        Declaration = declaration;
    }

    /// <summary>The collection, as written.</summary>
    public ExpressionSyntax Source { get; }

    /// <summary>The Select call, for the projection form.</summary>
    public IInvocationOperation? Select { get; }

    /// <summary>The foreach, for the loop form.</summary>
    public IForEachLoopOperation? Loop { get; }

    /// <summary>The loop's <c>list.Add(task)</c>.</summary>
    public IInvocationOperation? Added { get; }

    /// <summary>The list's declaration, removed with the loop.</summary>
    public LocalDeclarationStatementSyntax? Declaration { get; }

    /// <summary>The fixable source of <paramref name="whenAll"/>, or null when the fix cannot move it safely.</summary>
    public static FanOutSource? Of(IInvocationOperation whenAll, Diagnostic diagnostic, SemanticModel model, KnownSymbols symbols, CancellationToken cancellationToken)
    {
        var argument = whenAll.Arguments[0].Value;
        if (diagnostic.Properties.TryGetValue(UnboundedWhenAllAnalyzer.LoopFormProperty, out var loopForm) && loopForm == "true")
        {
            return OfLoop(argument, model, symbols, cancellationToken);
        }

        if (!diagnostic.Properties.TryGetValue(UnboundedWhenAllAnalyzer.InlineProjectionProperty, out var inline) || inline != "true"
            || ProjectionSource.FindSelect(argument, symbols, out _) is not { } select
            || !CanMoveSelector(select.Arguments[1].Value))
        {
            return null;
        }

        return new((ExpressionSyntax)OperationWalk.Unwrap(select.Arguments[0].Value).Syntax, select, null, null, null);
    }

    /// <summary>A one-parameter lambda (async, or expression-bodied) or a one-parameter method group.</summary>
    private static bool CanMoveSelector(IOperation selector) => OperationWalk.Unwrap(selector) switch
    {
        IDelegateCreationOperation { Target: IAnonymousFunctionOperation { Symbol.Parameters.Length: 1 } lambda } =>
            lambda.Symbol.IsAsync || lambda.Syntax is LambdaExpressionSyntax { ExpressionBody: not null },
        IDelegateCreationOperation { Target: IMethodReferenceOperation { Method.Parameters.Length: 1 } } => true,
        _ => false,
    };

    /// <summary>
    /// The loop form, when the list is a local declared empty (<c>var tasks = new List&lt;Task&gt;();</c>) in the same block and
    /// used only by the loop's Add and by the WhenAll, and the loop has one plain iteration variable.
    /// </summary>
    private static FanOutSource? OfLoop(IOperation argument, SemanticModel model, KnownSymbols symbols, CancellationToken cancellationToken)
    {
        if (TaskLoop.Find(argument, symbols, out var added) is not { Syntax: ForEachStatementSyntax loopSyntax } loop
            || added?.Instance is not ILocalReferenceOperation list
            || list.Local.DeclaringSyntaxReferences.FirstOrDefault()?.GetSyntax(cancellationToken) is not VariableDeclaratorSyntax
            {
                Initializer.Value: BaseObjectCreationExpressionSyntax { Initializer: null } creation,
                Parent: VariableDeclarationSyntax { Variables.Count: 1, Parent: LocalDeclarationStatementSyntax declaration },
            }
            || declaration.Parent != loopSyntax.Parent
            || creation.ArgumentList?.Arguments.Count > 1)
        {
            return null;
        }

        // Any other use of the list (a second Add, a Count, a return) would be lost with it.
        var body = declaration.Parent!;
        var uses = body.DescendantNodes().OfType<IdentifierNameSyntax>()
            .Count(name => name.Identifier.ValueText == list.Local.Name
                && SymbolEqualityComparer.Default.Equals(model.GetSymbolInfo(name, cancellationToken).Symbol, list.Local));
        return uses == 2 ? new(loopSyntax.Expression, null, loop, added, declaration) : null;
    }
}
