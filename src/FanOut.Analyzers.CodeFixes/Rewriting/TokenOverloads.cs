using System.Linq;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;

namespace FanOut.Analyzers.CodeFixes.Rewriting;

/// <summary>Finds where a call could take a cancellation token it is not given today.</summary>
internal static class TokenOverloads
{
    /// <summary>
    /// An accessible overload of <paramref name="method"/> with the same parameters plus a trailing CancellationToken,
    /// or null when there is none.
    /// </summary>
    public static IMethodSymbol? WithTrailingToken(IMethodSymbol method, KnownSymbols symbols, SemanticModel model, int position)
    {
        var definition = method.OriginalDefinition;
        return definition.ContainingType.GetMembers(definition.Name)
            .OfType<IMethodSymbol>()
            .FirstOrDefault(candidate => candidate.IsStatic == definition.IsStatic
                && candidate.TypeParameters.Length == definition.TypeParameters.Length
                && candidate.Parameters.Length == definition.Parameters.Length + 1
                && symbols.IsCancellationToken(candidate.Parameters[candidate.Parameters.Length - 1].Type)
                && SameParameterTypes(candidate, definition)
                && model.IsAccessible(position, candidate));
    }

    private static bool SameParameterTypes(IMethodSymbol longer, IMethodSymbol shorter)
    {
        for (var i = 0; i < shorter.Parameters.Length; i++)
        {
            var left = longer.Parameters[i].Type;
            var right = shorter.Parameters[i].Type;
            var sameTypeParameter = left is ITypeParameterSymbol leftParameter && right is ITypeParameterSymbol rightParameter
                && leftParameter.Ordinal == rightParameter.Ordinal;
            if (!sameTypeParameter && !SymbolEqualityComparer.Default.Equals(left, right)
                && left.ToDisplayString() != right.ToDisplayString())
            {
                return false;
            }
        }

        return true;
    }
}
