using FanOut.Analyzers.CodeFixes;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Testing;

namespace FanOut.Analyzers.Tests.Infrastructure;

/// <summary>
/// One analyzer and its fix, run by the Roslyn testing library: markup <c>{|FO0001:...|}</c> marks each expected
/// diagnostic; text without markup must produce none. The fixed code is compared character for character and compiled:
/// any compiler error in it fails the test.
/// </summary>
internal sealed class RuleTest<TAnalyzer, TFix> : CSharpCodeFixTest<TAnalyzer, TFix, DefaultVerifier>
    where TAnalyzer : DiagnosticAnalyzer, new()
    where TFix : CodeFixProvider, new()
{
    /// <summary>The usings every test source starts with.</summary>
    public const string Usings = """
        using System;
        using System.Collections.Generic;
        using System.Linq;
        using System.Threading;
        using System.Threading.Tasks;

        """;

    public RuleTest(bool withFanOut)
    {
        ReferenceAssemblies = TestReferences.None;
        TestState.AdditionalReferences.AddRange(TestReferences.Framework);
        FixedState.AdditionalReferences.AddRange(TestReferences.Framework);
        if (withFanOut)
        {
            TestState.AdditionalReferences.Add(TestReferences.FanOutLibrary);
            FixedState.AdditionalReferences.Add(TestReferences.FanOutLibrary);
        }
    }

    /// <summary>Checks the diagnostics of <paramref name="source"/> (markup) only.</summary>
    public static Task AnalyzeAsync(string source, bool withFanOut = false) =>
        new RuleTest<TAnalyzer, TFix>(withFanOut) { TestCode = Usings + source }.RunAsync();

    /// <summary>
    /// Checks the diagnostics of <paramref name="source"/>, then that the fix turns it into exactly
    /// <paramref name="fixedSource"/> (which must compile and may carry its own remaining markup).
    /// </summary>
    public static Task FixAsync(string source, string fixedSource, bool withFanOut = false) =>
        new RuleTest<TAnalyzer, TFix>(withFanOut) { TestCode = Usings + source, FixedCode = Usings + fixedSource }.RunAsync();

    /// <summary>Checks the diagnostics of <paramref name="source"/> (markup) compiled with FanOut and <paramref name="references"/>.</summary>
    public static Task AnalyzeWithAsync(string source, params MetadataReference[] references)
    {
        var test = new RuleTest<TAnalyzer, TFix>(withFanOut: true) { TestCode = Usings + source };
        test.TestState.AdditionalReferences.AddRange(references);
        return test.RunAsync();
    }

    /// <summary>As <see cref="AnalyzeAsync"/>, for a program of top-level statements.</summary>
    public static Task AnalyzeProgramAsync(string source, bool withFanOut = false)
    {
        var test = new RuleTest<TAnalyzer, TFix>(withFanOut) { TestCode = Usings + source };
        test.TestState.OutputKind = OutputKind.ConsoleApplication;
        return test.RunAsync();
    }

    /// <summary>As <see cref="FixAsync"/>, for a program of top-level statements.</summary>
    public static Task FixProgramAsync(string source, string fixedSource, bool withFanOut = false)
    {
        var test = new RuleTest<TAnalyzer, TFix>(withFanOut) { TestCode = Usings + source, FixedCode = Usings + fixedSource };
        test.TestState.OutputKind = OutputKind.ConsoleApplication;
        test.FixedState.OutputKind = OutputKind.ConsoleApplication;
        return test.RunAsync();
    }
}
