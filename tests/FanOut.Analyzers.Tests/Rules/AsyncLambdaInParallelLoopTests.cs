using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.Rules;

using Test = RuleTest<AsyncLambdaInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>;

/// <summary>FO0001: async lambdas and async void method groups handed to Parallel.For/ForEach/Invoke.</summary>
public sealed class AsyncLambdaInParallelLoopTests
{
    [Fact]
    public Task Analyze_AsyncLambdaToForEach_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                Parallel.ForEach(ids, {|FO0001:async|} id => await Task.Delay(id));
                await Task.Yield();
            }
        }
        """);

    [Fact]
    public Task Analyze_AsyncLambdaToForWithOptions_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            void Run()
            {
                Parallel.For(0, 10, new ParallelOptions { MaxDegreeOfParallelism = 2 }, {|FO0001:async|} i =>
                {
                    await Task.Delay(i);
                });
            }
        }
        """);

    [Fact]
    public Task Analyze_AsyncLambdasToInvoke_EachFlagged() => Test.AnalyzeAsync("""
        class C
        {
            void Run()
            {
                Parallel.Invoke(() => Console.WriteLine(1), {|FO0001:async|} () => await Task.Delay(1), {|FO0001:async|} () => await Task.Delay(2));
            }
        }
        """);

    [Fact]
    public Task Analyze_AsyncVoidMethodGroupToForEach_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            void Run(int[] ids)
            {
                Parallel.ForEach(ids, {|FO0001:Save|});
            }

            async void Save(int id) => await Task.Delay(id);
        }
        """);

    [Fact]
    public Task Analyze_SynchronousCpuBody_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            void Run(int[] values, long[] squares)
            {
                Parallel.ForEach(values, v => squares[v] = (long)v * v);
                Parallel.For(0, values.Length, i => Console.WriteLine(i));
                Parallel.Invoke(() => Console.WriteLine(1), Work);
            }

            void Work() { }
        }
        """);

    [Fact]
    public Task Analyze_AsyncLambdaToForEachAsyncOrTaskRun_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(int[] ids)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4 }, async (id, ct) => await Task.Delay(id, ct));
                await Task.Run(async () => await Task.Delay(1));
            }
        }
        """);

    [Fact]
    public Task Fix_ForEachInAsyncMethod_BecomesAwaitedForEachAsyncWithBodyToken() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                Parallel.ForEach(ids, {|FO0001:async|} id =>
                {
                    await Task.Delay(id);
                    Console.WriteLine(id);
                });
            }
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, ct) =>
                {
                    await Task.Delay(id, ct);
                    Console.WriteLine(id);
                });
            }
        }
        """);

    [Fact]
    public Task Fix_ForWithOptionsInAsyncLambda_BecomesForAsyncKeepingOptions() => Test.FixAsync("""
        class C
        {
            Func<Task> Make(ParallelOptions options) => async () =>
            {
                Parallel.For(0, 10, options, {|FO0001:async|} (int i) => await Task.Delay(i));
            };
        }
        """, """
        class C
        {
            Func<Task> Make(ParallelOptions options) => async () =>
            {
                await Parallel.ForAsync(0, 10, options, async (int i, CancellationToken ct) => await Task.Delay(i, ct));
            };
        }
        """);

    [Fact]
    public Task Fix_SynchronousMain_BecomesAsyncTaskMain() => Test.FixAsync("""
        static class Program
        {
            static void Main(string[] args)
            {
                Parallel.ForEach(args, {|FO0001:async|} arg => await Task.Delay(arg.Length));
            }
        }
        """, """
        static class Program
        {
            static async Task Main(string[] args)
            {
                await Parallel.ForEachAsync(args, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (arg, ct) => await Task.Delay(arg.Length, ct));
            }
        }
        """);

    [Fact]
    public Task Fix_SynchronousMethod_NotOffered() => Test.FixAsync("""
        class C
        {
            void Run(int[] ids)
            {
                Parallel.ForEach(ids, {|FO0001:async|} id => await Task.Delay(id));
            }
        }
        """, """
        class C
        {
            void Run(int[] ids)
            {
                Parallel.ForEach(ids, {|FO0001:async|} id => await Task.Delay(id));
            }
        }
        """);

    [Fact]
    public Task Fix_PartitionerSource_NotOffered() => Test.FixAsync("""
        using System.Collections.Concurrent;

        class C
        {
            async Task RunAsync(int[] ids)
            {
                Parallel.ForEach(Partitioner.Create(ids), {|FO0001:async|} id => await Task.Delay(id));
            }
        }
        """, """
        using System.Collections.Concurrent;

        class C
        {
            async Task RunAsync(int[] ids)
            {
                Parallel.ForEach(Partitioner.Create(ids), {|FO0001:async|} id => await Task.Delay(id));
            }
        }
        """);
}
