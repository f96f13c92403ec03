using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.Rules;

using Test = RuleTest<UnboundedWhenAllAnalyzer, WhenAllToBoundedFanOutFix>;

/// <summary>FO0003: Task.WhenAll over a projection of a collection whose size is not a small constant.</summary>
public sealed class UnboundedWhenAllTests
{
    [Fact]
    public Task Analyze_SelectOverParameterFieldAndQuery_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            private readonly int[] _items = Enumerable.Range(0, 500).ToArray();

            async Task RunAsync(IEnumerable<int> ids, List<string> names)
            {
                await {|FO0003:Task.WhenAll(ids.Select(id => CallAsync(id)))|};
                await {|FO0003:Task.WhenAll(_items.Select(CallAsync))|};
                var lengths = await {|FO0003:Task.WhenAll(from name in names select LengthAsync(name))|};
                await {|FO0003:Task.WhenAll(Enumerable.Select(ids, id => CallAsync(id)).ToList())|};
            }

            static Task CallAsync(int id) => Task.Delay(id);
            static Task<int> LengthAsync(string name) => Task.FromResult(name.Length);
        }
        """);

    [Fact]
    public Task Analyze_ProjectionThroughLocalAndNonConstantRange_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            public int OperationCount;

            async Task RunAsync()
            {
                var tasks = Enumerable.Range(0, OperationCount).Select(async i => await Task.Delay(i)).ToArray();
                await {|FO0003:Task.WhenAll(tasks)|};
                await {|FO0003:Task.WhenAll(Enumerable.Range(0, 500).Select(i => Task.Delay(i)))|};
            }
        }
        """);

    [Fact]
    public Task Analyze_NamedTasksAndSmallLiterals_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(Task<int> profile, Task<string> orders, Task alerts)
            {
                await Task.WhenAll(profile, orders, alerts);
                await Task.WhenAll(new[] { 1, 2, 3 }.Select(i => Task.Delay(i)));
                await Task.WhenAll(Enumerable.Range(0, 3).Select(i => Task.Delay(i)));
                int[] few = [1, 2, 3];
                await Task.WhenAll(few.Select(i => Task.Delay(i)));
                await Task.WhenAll(new List<int> { 1, 2 }.Select(i => Task.Delay(i)));
                var started = new List<Task> { Task.Delay(1) };
                await Task.WhenAll(started);
            }
        }
        """);

    [Fact]
    public Task Fix_ResultProjectionWithFanOut_BecomesFanOutAsyncKeepingResults() => Test.FixAsync("""
        class C
        {
            async Task<string[]> RunAsync(IEnumerable<int> ids)
            {
                return await {|FO0003:Task.WhenAll(ids.Select(async id =>
                {
                    await Task.Delay(id);
                    return id.ToString();
                }))|};
            }
        }
        """, """
        using FanOut;

        class C
        {
            async Task<string[]> RunAsync(IEnumerable<int> ids)
            {
                return await ids.FanOutAsync(async (id, ct) =>
                {
                    await Task.Delay(id, ct);
                    return id.ToString();
                }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(50) });
            }
        }
        """, withFanOut: true);

    [Fact]
    public Task Fix_ExpressionLambdaWithFanOut_AwaitsTheCallWithTheToken() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(List<int> ids)
            {
                var prices = await {|FO0003:Task.WhenAll(ids.Select(id => GetPriceAsync(id)).ToArray())|};
                Console.WriteLine(prices.Sum());
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
        }
        """, """
        using FanOut;

        class C
        {
            async Task RunAsync(List<int> ids)
            {
                var prices = await ids.FanOutAsync(async (id, ct) => await GetPriceAsync(id, ct), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(50) });
                Console.WriteLine(prices.Sum());
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
        }
        """, withFanOut: true);

    [Fact]
    public Task Fix_MethodGroupWithFanOut_CallsItPerItem() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids)
            {
                await {|FO0003:Task.WhenAll(ids.Select(SaveAsync))|};
            }

            static Task SaveAsync(int id) => Task.Delay(id);
            static Task SaveAsync(int id, CancellationToken cancellationToken) => Task.Delay(id, cancellationToken);
        }
        """, """
        using FanOut;

        class C
        {
            async Task RunAsync(int[] ids)
            {
                await ids.FanOutAsync(async (item, ct) => await SaveAsync(item, ct), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(50) });
            }

            static Task SaveAsync(int id) => Task.Delay(id);
            static Task SaveAsync(int id, CancellationToken cancellationToken) => Task.Delay(id, cancellationToken);
        }
        """, withFanOut: true);

    [Fact]
    public Task Fix_WithoutFanOut_BecomesBoundedForEachAsync() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<string> paths)
            {
                await {|FO0003:Task.WhenAll(paths.Select(path => Task.Delay(path.Length)))|};
            }
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<string> paths)
            {
                await Parallel.ForEachAsync(paths, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (path, ct) => await Task.Delay(path.Length, ct));
            }
        }
        """);

    [Fact]
    public Task Fix_ResultsWithoutFanOutOrThroughLocal_NotOffered() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                var lengths = await {|FO0003:Task.WhenAll(ids.Select(id => Task.FromResult(id)))|};
                var tasks = ids.Select(id => Task.Delay(id)).ToList();
                await {|FO0003:Task.WhenAll(tasks)|};
            }
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                var lengths = await {|FO0003:Task.WhenAll(ids.Select(id => Task.FromResult(id)))|};
                var tasks = ids.Select(id => Task.Delay(id)).ToList();
                await {|FO0003:Task.WhenAll(tasks)|};
            }
        }
        """);
}
