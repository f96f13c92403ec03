using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.Rules;

using Test = RuleTest<DefaultLimitForIoAnalyzer, ExplicitLimitFix>;

/// <summary>FO0005 (info): Parallel.ForEachAsync at its ProcessorCount default with a body that awaits I/O.</summary>
public sealed class DefaultLimitForIoTests
{
    [Fact]
    public Task Analyze_DefaultLimitAwaitingIo_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                await Parallel.{|FO0005:ForEachAsync|}(ids, async (id, token) => await Task.Delay(id, token));
                await Parallel.{|FO0005:ForEachAsync|}(ids, ct, async (id, token) => await Task.Delay(id, token));
                await Parallel.{|FO0005:ForEachAsync|}(ids, new ParallelOptions { CancellationToken = ct }, async (id, token) =>
                {
                    await Task.Yield();
                    await Task.Delay(id, token).ConfigureAwait(false);
                });
                await Parallel.{|FO0005:ForAsync|}(0, 10, async (i, token) => await Task.Delay(i, token));
            }
        }
        """);

    [Fact]
    public Task Analyze_ExplicitLimitCpuBodyOrOptionsFromElsewhere_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(int[] ids, ParallelOptions options)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 40 }, async (id, token) => await Task.Delay(id, token));
                await Parallel.ForEachAsync(ids, options, async (id, token) => await Task.Delay(id, token));
                await Parallel.ForEachAsync(ids, (id, token) =>
                {
                    Console.WriteLine(Math.Pow(id, 2));
                    return ValueTask.CompletedTask;
                });
                await Parallel.ForEachAsync(ids, async (id, token) =>
                {
                    await Task.Yield();
                    await Task.Run(() => Math.Pow(id, 2), token);
                });
            }
        }
        """);

    [Fact]
    public Task Fix_NoOptions_AddsBoundedOptions() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids)
            {
                await Parallel.{|FO0005:ForEachAsync|}(ids, async (id, token) => await Task.Delay(id, token));
            }
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, token) => await Task.Delay(id, token));
            }
        }
        """);

    [Fact]
    public Task Fix_TokenOverload_MovesTokenIntoOptions() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                await Parallel.{|FO0005:ForEachAsync|}(ids, ct, async (id, token) => await Task.Delay(id, token));
            }
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50, CancellationToken = ct }, async (id, token) => await Task.Delay(id, token));
            }
        }
        """);

    [Fact]
    public Task Fix_OptionsWithoutLimit_GetTheLimit() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                await Parallel.{|FO0005:ForEachAsync|}(ids, new ParallelOptions { CancellationToken = ct }, async (id, token) => await Task.Delay(id, token));
            }
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50, CancellationToken = ct }, async (id, token) => await Task.Delay(id, token));
            }
        }
        """);
}
