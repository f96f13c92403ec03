using System.Collections.Generic;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers.Analysis;

/// <summary>Walks the operations of one function body without entering the lambdas and local functions it declares.</summary>
internal static class OperationWalk
{
    /// <summary>Every operation under <paramref name="root"/>, depth first, nested functions left out.</summary>
    public static IEnumerable<IOperation> DescendantsInSameFunction(IOperation root)
    {
        var pending = new Stack<IOperation>();
        pending.Push(root);
        while (pending.Count > 0)
        {
            var operation = pending.Pop();
            foreach (var child in operation.ChildOperations)
            {
                if (child is IAnonymousFunctionOperation or ILocalFunctionOperation)
                {
                    continue;
                }

                yield return child;
                pending.Push(child);
            }
        }
    }

    /// <summary>The operation under conversions and parentheses.</summary>
    public static IOperation Unwrap(IOperation operation)
    {
        while (true)
        {
            switch (operation)
            {
                case IConversionOperation conversion:
                    operation = conversion.Operand;
                    break;
                case IParenthesizedOperation parenthesized:
                    operation = parenthesized.Operand;
                    break;
                default:
                    return operation;
            }
        }
    }

    /// <summary>The lambdas and method groups an argument hands over, including each element of a params array.</summary>
    public static IEnumerable<IOperation> DelegatesOf(IArgumentOperation argument)
    {
        var value = Unwrap(argument.Value);
        if (value is IArrayCreationOperation { Initializer: { } initializer })
        {
            foreach (var element in initializer.ElementValues)
            {
                yield return Unwrap(element);
            }
        }
        else
        {
            yield return value;
        }
    }

    /// <summary>The anonymous function an argument hands over, or null when it passes something else.</summary>
    public static IAnonymousFunctionOperation? LambdaOf(IOperation value) =>
        Unwrap(value) is IDelegateCreationOperation { Target: IAnonymousFunctionOperation lambda } ? lambda : null;
}
