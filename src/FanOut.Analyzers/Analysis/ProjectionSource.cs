using System.Linq;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers.Analysis;

/// <summary>Finds the <c>Select</c> behind a Task.WhenAll argument and judges the size of the collection it projects.</summary>
internal static class ProjectionSource
{
    /// <summary>
    /// The most items a fan-out may start at once and still count as "a small, fixed set": more than this in a
    /// literal, an array size or an Enumerable.Range count is treated like a collection of unknown size.
    /// </summary>
    public const int SmallFanOutCount = 16;

    /// <summary>How many local variables deep the rules follow an initializer.</summary>
    private const int MaxLocalHops = 3;

    /// <summary>
    /// The <c>Enumerable.Select</c> call that produced <paramref name="argument"/> (through <c>ToArray</c>/<c>ToList</c>,
    /// a query expression, or a local variable's initializer), or null when it is something else.
    /// </summary>
    public static IInvocationOperation? FindSelect(IOperation argument, KnownSymbols symbols, out bool throughLocal)
    {
        throughLocal = false;
        var current = argument;
        for (var hop = 0; hop <= MaxLocalHops; hop++)
        {
            current = SkipMaterialization(OperationWalk.Unwrap(current), symbols);
            if (current is ITranslatedQueryOperation query)
            {
                current = OperationWalk.Unwrap(query.Operation);
            }

            if (current is IInvocationOperation { TargetMethod.Name: "Select" } select
                && KnownSymbols.Is(select.TargetMethod.ContainingType, symbols.Enumerable))
            {
                return select;
            }

            var initializer = current is ILocalReferenceOperation local ? InitializerOf(local) : null;
            if (initializer is null)
            {
                return null;
            }

            throughLocal = true;
            current = initializer;
        }

        return null;
    }

    /// <summary>
    /// Whether the collection <paramref name="source"/> holds at most <see cref="SmallFanOutCount"/> items by
    /// construction: a short array or collection literal, a small constant array size, or a small constant Range/Repeat.
    /// </summary>
    public static bool IsSmallConstant(IOperation source, KnownSymbols symbols)
    {
        var current = source;
        for (var hop = 0; hop <= MaxLocalHops; hop++)
        {
            current = SkipMaterialization(OperationWalk.Unwrap(current), symbols);
            switch (current)
            {
                case IArrayCreationOperation { Initializer: { } initializer }:
                    return initializer.ElementValues.Length <= SmallFanOutCount;
                case IArrayCreationOperation array:
                    return array.DimensionSizes.All(static size => IsSmall(size.ConstantValue));
                case ICollectionExpressionOperation collection:
                    return collection.Elements.All(static element => element is not ISpreadOperation)
                        && collection.Elements.Length <= SmallFanOutCount;
                case IObjectCreationOperation { Initializer: { } objectInitializer }:
                    return objectInitializer.Initializers.Length <= SmallFanOutCount
                        && objectInitializer.Initializers.All(static element => element is IInvocationOperation);
                case IInvocationOperation { TargetMethod.Name: "Range" or "Repeat" } generator
                    when KnownSymbols.Is(generator.TargetMethod.ContainingType, symbols.Enumerable)
                        && generator.Arguments.Length == 2:
                    return IsSmall(generator.Arguments[1].Value.ConstantValue);
                case ILocalReferenceOperation local when InitializerOf(local) is { } initializer:
                    current = initializer;
                    break;
                default:
                    return false;
            }
        }

        return false;
    }

    /// <summary>Drops a trailing ToArray/ToList/AsEnumerable: they keep the count and start the same tasks.</summary>
    public static IOperation SkipMaterialization(IOperation operation, KnownSymbols symbols)
    {
        while (operation is IInvocationOperation { TargetMethod.Name: "ToArray" or "ToList" or "AsEnumerable" } materialize
            && KnownSymbols.Is(materialize.TargetMethod.ContainingType, symbols.Enumerable)
            && materialize.Arguments.Length == 1)
        {
            operation = OperationWalk.Unwrap(materialize.Arguments[0].Value);
        }

        return operation;
    }

    private static bool IsSmall(Optional<object?> constant) =>
        constant is { HasValue: true, Value: int count } && count <= SmallFanOutCount;

    /// <summary>The initializer of a local declared with one, in the same tree; null otherwise.</summary>
    public static IOperation? InitializerOf(ILocalReferenceOperation local) => InitializerOf(local.Local, local.SemanticModel);

    /// <summary>The initializer of a local or field declared with one, in the tree of <paramref name="model"/>; null otherwise.</summary>
    public static IOperation? InitializerOf(ISymbol variable, SemanticModel? model)
    {
        if (model is null)
        {
            return null;
        }

        foreach (var reference in variable.DeclaringSyntaxReferences)
        {
            if (reference.GetSyntax() is VariableDeclaratorSyntax { Initializer.Value: { } value }
                && value.SyntaxTree == model.SyntaxTree)
            {
                return model.GetOperation(value);
            }
        }

        return null;
    }
}
