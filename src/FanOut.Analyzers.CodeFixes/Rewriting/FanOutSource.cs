using System.Collections.Generic;
using System.Linq;
using System.Threading;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;
using Microsoft.CodeAnalysis.Text;

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

    /// <summary>
    /// The token arguments inside the per-item work that come from outside it (<c>CallAsync(id, cancellationToken)</c>): the
    /// fix passes the body's token there instead (else FO0004) and hands this one to the fan-out itself.
    /// </summary>
    public IReadOnlyList<ArgumentSyntax> OuterTokens { get; private set; } = [];

    /// <summary>The one outer token the per-item work used, passed to the fan-out; null when it used none.</summary>
    public ExpressionSyntax? OuterToken => OuterTokens.Count > 0 ? OuterTokens[0].Expression : null;

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
        FanOutSource? found;
        IOperation? perItem;
        TextSpan scope;
        if (diagnostic.Properties.TryGetValue(UnboundedWhenAllAnalyzer.LoopFormProperty, out var loopForm) && loopForm == "true")
        {
            found = OfLoop(argument, model, symbols, cancellationToken);
            perItem = found?.Added!.Arguments[0].Value;
            scope = found?.Loop!.Syntax.Span ?? default;
        }
        else if (!diagnostic.Properties.TryGetValue(UnboundedWhenAllAnalyzer.InlineProjectionProperty, out var inline) || inline != "true"
            || ProjectionSource.FindSelect(argument, symbols, out _) is not { } select
            || !CanMoveSelector(select.Arguments[1].Value))
        {
            return null;
        }
        else
        {
            found = new((ExpressionSyntax)OperationWalk.Unwrap(select.Arguments[0].Value).Syntax, select, null, null, null);
            var lambda = OperationWalk.LambdaOf(select.Arguments[1].Value);
            perItem = lambda?.Body;
            scope = lambda?.Syntax.Span ?? default;
        }

        if (found is null || perItem is null)
        {
            return found;
        }

        // One outer token becomes the fan-out's; two different ones have no single home, so no fix.
        var outer = OuterTokenArguments(perItem, scope, symbols);
        if (outer.Select(static token => token.Expression.ToString()).Distinct().Count() > 1)
        {
            return null;
        }

        found.OuterTokens = outer;
        return found;
    }

    /// <summary>
    /// The CancellationToken arguments under <paramref name="perItem"/> built only from symbols declared outside
    /// <paramref name="scope"/> (the selector lambda, or the foreach): what FO0004 would report inside the new body.
    /// </summary>
    private static List<ArgumentSyntax> OuterTokenArguments(IOperation perItem, TextSpan scope, KnownSymbols symbols)
    {
        var found = new List<ArgumentSyntax>();
        foreach (var argument in perItem.DescendantsAndSelf().OfType<IArgumentOperation>())
        {
            if (argument.ArgumentKind != ArgumentKind.Explicit || argument.Syntax is not ArgumentSyntax syntax
                || !symbols.IsCancellationToken(argument.Parameter?.Type))
            {
                continue;
            }

            var symbolsUsed = OperationWalk.Unwrap(argument.Value).DescendantsAndSelf().Select(SymbolOf).Where(static symbol => symbol is not null).ToList();
            if (symbolsUsed.Count > 0 && symbolsUsed.All(symbol => !symbol!.DeclaringSyntaxReferences.Any(reference => reference.SyntaxTree == syntax.SyntaxTree && scope.Contains(reference.Span))))
            {
                found.Add(syntax);
            }
        }

        return found;
    }

    private static ISymbol? SymbolOf(IOperation operation) => operation switch
    {
        ILocalReferenceOperation local => local.Local,
        IParameterReferenceOperation parameter => parameter.Parameter,
        IFieldReferenceOperation field => field.Field,
        // CancellationToken.None is no token at all, not an outer one.
        IPropertyReferenceOperation { Instance: null, Property.Name: "None" } => null,
        IPropertyReferenceOperation property => property.Property,
        _ => null,
    };

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
            || Container(declaration) != Container(loopSyntax)
            || creation.ArgumentList?.Arguments.Count > 1)
        {
            return null;
        }

        // Any other use of the list (a second Add, a Count, a return) would be lost with it.
        var body = Container(declaration)!;
        var uses = body.DescendantNodes().OfType<IdentifierNameSyntax>()
            .Count(name => name.Identifier.ValueText == list.Local.Name
                && SymbolEqualityComparer.Default.Equals(model.GetSymbolInfo(name, cancellationToken).Symbol, list.Local));
        return uses == 2 ? new(loopSyntax.Expression, null, loop, added, declaration) : null;
    }

    /// <summary>The block that holds <paramref name="statement"/>, or the file for a top-level statement.</summary>
    private static SyntaxNode? Container(StatementSyntax statement) =>
        statement.Parent is GlobalStatementSyntax global ? global.Parent : statement.Parent;

    /// <summary>What to remove for <paramref name="statement"/>: the statement, or its GlobalStatementSyntax at top level.</summary>
    public static SyntaxNode Removable(StatementSyntax statement) =>
        statement.Parent is GlobalStatementSyntax global ? global : statement;
}
