using System;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;

namespace FanOut.Analyzers.Analysis;

/// <summary>How every FanOut rule starts: per compilation, its <see cref="KnownSymbols"/>, then each invocation.</summary>
internal static class InvocationAnalysis
{
    /// <summary>
    /// Registers <paramref name="analyze"/> for every invocation of a compilation whose <see cref="KnownSymbols"/> have what
    /// the rule needs (<paramref name="applies"/>); a compilation without those types is not analyzed at all.
    /// </summary>
    public static void RegisterInvocationAnalysis(this AnalysisContext context, Func<KnownSymbols, bool> applies, Action<OperationAnalysisContext, KnownSymbols> analyze) =>
        context.RegisterCompilationStartAction(start =>
        {
            var symbols = KnownSymbols.From(start.Compilation);
            if (applies(symbols))
            {
                start.RegisterOperationAction(operation => analyze(operation, symbols), OperationKind.Invocation);
            }
        });
}
