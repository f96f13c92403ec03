using FanOut.Analyzers.CodeFixes;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Testing;

namespace FanOut.Analyzers.Tests.Infrastructure;

/// <summary>
/// One fix, with all five analyzers watching: the source's markup names every diagnostic of every rule, and the fixed
/// code (one fix at a time, and Fix All in a document, a project and a solution) must compile and raise none, so a fix
/// that trades one warning for another (FO0003's body keeping the outer token: FO0004; FO0001's ForEachAsync at the
/// default limit: FO0005) fails here.
/// </summary>
internal sealed class AllRulesFixTest<TFix> : CSharpCodeFixTest<AsyncLambdaInParallelLoopAnalyzer, TFix, DefaultVerifier>
    where TFix : CodeFixProvider, new()
{
    public AllRulesFixTest(string source, string fixedSource, bool topLevel, bool withFanOut)
    {
        ReferenceAssemblies = TestReferences.None;
        foreach (var state in new[] { TestState, FixedState })
        {
            state.AdditionalReferences.AddRange(TestReferences.Framework);
            if (withFanOut)
            {
                state.AdditionalReferences.Add(TestReferences.FanOutLibrary);
            }

            if (topLevel)
            {
                state.OutputKind = OutputKind.ConsoleApplication;
            }
        }

        TestCode = RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + source;
        FixedCode = RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + fixedSource;
    }

    /// <summary>Every analyzer the package ships.</summary>
    protected override IEnumerable<DiagnosticAnalyzer> GetDiagnosticAnalyzers() =>
    [
        new AsyncLambdaInParallelLoopAnalyzer(),
        new BlockingWaitInParallelLoopAnalyzer(),
        new UnboundedWhenAllAnalyzer(),
        new OuterTokenInLoopBodyAnalyzer(),
        new DefaultLimitForIoAnalyzer(),
    ];

    /// <summary>Applies the fix (its first action unless <paramref name="equivalenceKey"/> names another) and checks the output against every rule.</summary>
    public static Task VerifyAsync(string source, string fixedSource, bool topLevel = false, bool withFanOut = true, string? equivalenceKey = null, int actionIndex = 0)
    {
        var test = new AllRulesFixTest<TFix>(source, fixedSource, topLevel, withFanOut);
        if (equivalenceKey is not null)
        {
            test.CodeActionEquivalenceKey = equivalenceKey;
            test.CodeActionIndex = actionIndex;
        }

        return test.RunAsync();
    }
}
