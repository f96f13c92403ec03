using Microsoft.CodeAnalysis;

namespace FanOut.Analyzers.CodeFixes.Rewriting;

/// <summary>Picks the name of the token parameter a fix adds to a loop body.</summary>
internal static class TokenName
{
    private const string Preferred = "ct";

    /// <summary>"ct", or "ct2", "ct3"... when that name is already taken at <paramref name="position"/>.</summary>
    public static string Unique(SemanticModel model, int position)
    {
        var name = Preferred;
        for (var suffix = 2; model.LookupSymbols(position, name: name).Length > 0; suffix++)
        {
            name = Preferred + suffix;
        }

        return name;
    }
}
