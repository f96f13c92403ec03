using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

using Microsoft.CodeAnalysis.Testing;

namespace FanOut.Analyzers.Tests.FixAll;

/// <summary>
/// Issue 18 item 6: FO0001 and FO0002 support Fix All. The testing library applies the fix one diagnostic at a time and
/// then through the provider's Fix All in document, project and solution, and each must give exactly the fixed code.
/// </summary>
public sealed class ParallelLoopFixAllTests
{
    private const string BlockingLoops = """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, int[] more)
            {
                Parallel.ForEach(ids, id =>
                {
                    var price = {|FO0002:GetPriceAsync(id).Result|};
                    {|FO0002:SaveAsync(id, price).Wait()|};
                });
                Parallel.ForEach(more, id => Console.WriteLine({|FO0002:GetPriceAsync(id).Result|}));
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
            static Task SaveAsync(int id, decimal price, CancellationToken cancellationToken = default) => Task.CompletedTask;
        }
        """;

    private const string BlockingLoopsFixed = """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, int[] more)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, ct) =>
                {
                    var price = await GetPriceAsync(id, ct);
                    await SaveAsync(id, price, ct);
                });
                await Parallel.ForEachAsync(more, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, ct) => Console.WriteLine(await GetPriceAsync(id, ct)));
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
            static Task SaveAsync(int id, decimal price, CancellationToken cancellationToken = default) => Task.CompletedTask;
        }
        """;

    [Fact]
    public void GetFixAllProvider_CoversDocumentProjectAndSolution()
    {
        // Without a provider the testing library skips its Fix All passes, and 'dotnet format analyzers' refuses the rule.
        var provider = new ParallelLoopToForEachAsyncFix().GetFixAllProvider();

        Assert.NotNull(provider);
        Assert.Equal(
            [Microsoft.CodeAnalysis.CodeFixes.FixAllScope.Document, Microsoft.CodeAnalysis.CodeFixes.FixAllScope.Project, Microsoft.CodeAnalysis.CodeFixes.FixAllScope.Solution],
            provider.GetSupportedFixAllScopes().Order());
    }

    [Fact]
    public Task FixAll_TwoLoopsOneWithTwoWaits_RewritesEachLoopOnce()
    {
        var test = new RuleTest<BlockingWaitInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>(withFanOut: false)
        {
            TestCode = RuleTest<BlockingWaitInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + BlockingLoops,
            FixedCode = RuleTest<BlockingWaitInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + BlockingLoopsFixed,
            // One fix per loop: the first loop's two diagnostics go with one rewrite.
            NumberOfIncrementalIterations = 2,
            NumberOfFixAllIterations = 1,
        };
        return test.RunAsync();
    }

    [Fact]
    public Task FixAll_AsyncLambdasInTwoLoopsAndTwoDocuments_RewritesThemAll()
    {
        const string Loops = """
            class C
            {
                async Task RunAsync(IEnumerable<int> ids)
                {
                    Parallel.ForEach(ids, {|FO0001:async|} id => await Task.Delay(id));
                    Parallel.For(0, 10, {|FO0001:async|} i => await Task.Delay(i));
                }
            }
            """;
        const string LoopsFixed = """
            class C
            {
                async Task RunAsync(IEnumerable<int> ids)
                {
                    await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, ct) => await Task.Delay(id, ct));
                    await Parallel.ForAsync(0, 10, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (i, ct) => await Task.Delay(i, ct));
                }
            }
            """;
        var test = new RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>(withFanOut: false)
        {
            // Fix All in a document takes one pass per document; in the project or the solution, one pass for both.
            NumberOfFixAllInDocumentIterations = 2,
            NumberOfFixAllIterations = 1,
        };
        test.TestState.Sources.Add(RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + Loops);
        test.TestState.Sources.Add(RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + Loops.Replace("class C", "class D", StringComparison.Ordinal));
        test.FixedState.Sources.Add(RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + LoopsFixed);
        test.FixedState.Sources.Add(RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>.Usings + LoopsFixed.Replace("class C", "class D", StringComparison.Ordinal));
        return test.RunAsync();
    }
}
