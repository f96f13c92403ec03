using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.Rules;

using Test = RuleTest<BlockingWaitInParallelLoopAnalyzer, ParallelLoopToForEachAsyncFix>;

/// <summary>FO0002: blocking waits inside synchronous Parallel loop bodies.</summary>
public sealed class BlockingWaitInParallelLoopTests
{
    [Fact]
    public Task Analyze_ResultInForEachInsideAsyncMethod_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                await Task.Yield();
                Parallel.ForEach(ids, id =>
                {
                    var price = {|FO0002:GetPriceAsync(id).Result|};
                    Console.WriteLine(price);
                });
            }

            static Task<decimal> GetPriceAsync(int id) => Task.FromResult((decimal)id);
        }
        """);

    [Fact]
    public Task Analyze_EveryBlockingForm_EachFlagged() => Test.AnalyzeAsync("""
        class C
        {
            void Run(int[] ids)
            {
                Parallel.For(0, ids.Length, i =>
                {
                    {|FO0002:Task.Delay(ids[i]).Wait()|};
                    var text = {|FO0002:ReadAsync(i).GetAwaiter().GetResult()|};
                    var value = {|FO0002:new ValueTask<int>(i).Result|};
                    {|FO0002:Task.WaitAll(Task.Delay(1), Task.Delay(2))|};
                });
            }

            static Task<string> ReadAsync(int i) => Task.FromResult(i.ToString());
        }
        """);

    [Fact]
    public Task Analyze_BlockingInInvokeAction_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            void Run(Task<int> pending)
            {
                Parallel.Invoke(() => Console.WriteLine({|FO0002:pending.Result|}), () => Console.WriteLine(2));
            }
        }
        """);

    [Fact]
    public Task Analyze_CpuBodyAndResultAfterWhenAll_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(int[] values, Task<int> first, Task<int> second)
            {
                Parallel.ForEach(values, v => Console.WriteLine(v * v));
                await Task.WhenAll(first, second);
                Console.WriteLine(first.Result + second.Result);
            }
        }
        """);

    [Fact]
    public Task Analyze_BlockingInNestedLambdaOrAsyncLoop_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(int[] ids, Task<int> pending)
            {
                Parallel.ForEach(ids, id =>
                {
                    Func<int> later = () => pending.Result;
                    Console.WriteLine(id);
                });
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4 }, async (id, ct) => await Task.Delay(id, ct));
            }
        }
        """);

    [Fact]
    public Task Fix_ResultInForEach_BecomesAwaitWithBodyToken() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                Parallel.ForEach(ids, id =>
                {
                    var price = {|FO0002:GetPriceAsync(id).Result|};
                    Console.WriteLine(price);
                });
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, ct) =>
                {
                    var price = await GetPriceAsync(id, ct);
                    Console.WriteLine(price);
                });
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
        }
        """);

    [Fact]
    public Task Fix_WaitGetResultAndWaitAll_BecomeAwaits() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(string[] paths, ParallelOptions options)
            {
                Parallel.ForEach(paths, options, path =>
                {
                    {|FO0002:Task.Delay(10).Wait()|};
                    var length = {|FO0002:ReadAsync(path).GetAwaiter().GetResult()|}.Length;
                    {|FO0002:Task.WaitAll(Task.Delay(1), Task.Delay(2))|};
                    Console.WriteLine(length);
                });
            }

            static Task<string> ReadAsync(string path) => Task.FromResult(path);
        }
        """, """
        class C
        {
            async Task RunAsync(string[] paths, ParallelOptions options)
            {
                await Parallel.ForEachAsync(paths, options, async (path, ct) =>
                {
                    await Task.Delay(10, ct);
                    var length = (await ReadAsync(path)).Length;
                    await Task.WhenAll(Task.Delay(1, ct), Task.Delay(2, ct));
                    Console.WriteLine(length);
                });
            }

            static Task<string> ReadAsync(string path) => Task.FromResult(path);
        }
        """);

    [Fact]
    public Task Fix_ParallelForInTopLevelStatements_BecomesForAsync() => Test.FixProgramAsync("""
        var results = new int[10];
        Parallel.For(0, results.Length, i => results[i] = {|FO0002:Task.FromResult(i).Result|});
        Console.WriteLine(results.Sum());
        """, """
        var results = new int[10];
        await Parallel.ForAsync(0, results.Length, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (i, ct) => results[i] = await Task.FromResult(i));
        Console.WriteLine(results.Sum());
        """);

    [Fact]
    public Task Fix_WaitWithTimeout_NotOffered() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids)
            {
                Parallel.ForEach(ids, id => {|FO0002:Task.Delay(id).Wait(1000)|});
            }
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids)
            {
                Parallel.ForEach(ids, id => {|FO0002:Task.Delay(id).Wait(1000)|});
            }
        }
        """);
}
