using System.Collections.Immutable;

using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Testing;

namespace FanOut.Analyzers.Tests.Infrastructure;

/// <summary>All five analyzers at once over one source: the seeds' snippets are checked against every rule.</summary>
internal sealed class AllRulesTest : CSharpAnalyzerTest<AsyncLambdaInParallelLoopAnalyzer, DefaultVerifier>
{
    public AllRulesTest(string source)
    {
        ReferenceAssemblies = TestReferences.None;
        TestState.AdditionalReferences.AddRange(TestReferences.Framework);
        TestState.AdditionalReferences.Add(TestReferences.FanOutLibrary);
        TestCode = RuleTest<AsyncLambdaInParallelLoopAnalyzer, CodeFixes.ParallelLoopToForEachAsyncFix>.Usings + source;
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

    /// <summary>Runs the check.</summary>
    public static Task VerifyAsync(string source) => new AllRulesTest(source).RunAsync();
}
