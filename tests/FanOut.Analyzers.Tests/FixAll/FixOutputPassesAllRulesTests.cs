using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.FixAll;

/// <summary>
/// Issue 26 item 1: every fix's output goes back through all five analyzers, one fix at a time and through Fix All, and
/// must raise nothing. Before, FO0003's FanOutAsync body kept the outer token (two FO0004) and FO0001's ForEachAsync had no
/// MaxDegreeOfParallelism (FO0005), so with TreatWarningsAsErrors a Fix All broke the build it was meant to repair.
/// </summary>
public sealed class FixOutputPassesAllRulesTests
{
    [Fact]
    public Task Fo0001Fix_WritesAForEachAsyncWithALimit() => AllRulesFixTest<ParallelLoopToForEachAsyncFix>.VerifyAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                Parallel.ForEach(ids, {|FO0001:async|} id => await Task.Delay(id));
                Parallel.For(0, 10, {|FO0001:async|} i => await Task.Delay(i));
            }
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, ct) => await Task.Delay(id, ct));
                await Parallel.ForAsync(0, 10, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (i, ct) => await Task.Delay(i, ct));
            }
        }
        """);

    [Fact]
    public Task Fo0002Fix_AddsTheLimitToOptionsThatHaveNone() => AllRulesFixTest<ParallelLoopToForEachAsyncFix>.VerifyAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, CancellationToken token)
            {
                Parallel.ForEach(ids, new ParallelOptions { CancellationToken = token }, id => {|FO0002:SaveAsync(id).Wait()|});
            }

            static Task SaveAsync(int id, CancellationToken cancellationToken = default) => Task.Delay(id, cancellationToken);
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, CancellationToken token)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50, CancellationToken = token }, async (id, ct) => await SaveAsync(id, ct));
            }

            static Task SaveAsync(int id, CancellationToken cancellationToken = default) => Task.Delay(id, cancellationToken);
        }
        """);

    [Fact]
    public Task Fo0003Fix_BodyUsesItsOwnTokenAndTheOuterOneCancelsTheFanOut() => AllRulesFixTest<WhenAllToBoundedFanOutFix>.VerifyAsync("""
        class C
        {
            async Task<string[]> RunAsync(IEnumerable<int> ids, CancellationToken cancellationToken)
            {
                return await {|FO0003:Task.WhenAll(ids.Select(async id =>
                {
                    await Task.Delay(id, cancellationToken);
                    return await NameAsync(id, cancellationToken);
                }))|};
            }

            static Task<string> NameAsync(int id, CancellationToken cancellationToken) => Task.FromResult(id.ToString());
        }
        """, """
        using FanOut;

        class C
        {
            async Task<string[]> RunAsync(IEnumerable<int> ids, CancellationToken cancellationToken)
            {
                return await ids.FanOutAsync(50, async (id, ct) =>
                {
                    await Task.Delay(id, ct);
                    return await NameAsync(id, ct);
                }, cancellationToken);
            }

            static Task<string> NameAsync(int id, CancellationToken cancellationToken) => Task.FromResult(id.ToString());
        }
        """);

    [Fact]
    public Task Fo0003AdaptiveFix_BodyUsesItsOwnToken() => AllRulesFixTest<WhenAllToBoundedFanOutFix>.VerifyAsync("""
        class C
        {
            async Task RunAsync(List<int> ids, CancellationToken ct)
            {
                var prices = await {|FO0003:Task.WhenAll(ids.Select(id => GetPriceAsync(id, ct)))|};
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken) => Task.FromResult((decimal)id);
        }
        """, """
        using FanOut;

        class C
        {
            async Task RunAsync(List<int> ids, CancellationToken ct)
            {
                var prices = await ids.FanOutAsync(async (id, ct2) => await GetPriceAsync(id, ct2), cancellationToken: ct);
            }

            static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken) => Task.FromResult((decimal)id);
        }
        """, equivalenceKey: WhenAllToBoundedFanOutFix.AdaptiveKey, actionIndex: 1);

    [Fact]
    public Task Fo0003FixWithoutFanOut_LoopFormTokenMovesIntoTheOptions() => AllRulesFixTest<WhenAllToBoundedFanOutFix>.VerifyAsync("""
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken token)
            {
                var tasks = new List<Task>();
                foreach (var id in ids)
                    tasks.Add(SaveAsync(id, token));
                await {|FO0003:Task.WhenAll(tasks)|};
            }

            static Task SaveAsync(int id, CancellationToken cancellationToken) => Task.Delay(id, cancellationToken);
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken token)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50, CancellationToken = token }, async (id, ct) => await SaveAsync(id, ct));
            }

            static Task SaveAsync(int id, CancellationToken cancellationToken) => Task.Delay(id, cancellationToken);
        }
        """, withFanOut: false);

    [Fact]
    public Task Fo0003Fix_TopLevelLoopForm() => AllRulesFixTest<WhenAllToBoundedFanOutFix>.VerifyAsync("""
        using var cts = new CancellationTokenSource();
        var tasks = new List<Task>();
        foreach (var arg in args)
        {
            tasks.Add(Task.Delay(arg.Length, cts.Token));
        }

        await {|FO0003:Task.WhenAll(tasks)|};
        """, """
        using FanOut;

        using var cts = new CancellationTokenSource();
        await args.FanOutAsync(50, async (arg, ct) => await Task.Delay(arg.Length, ct), cts.Token);
        """, topLevel: true);

    [Fact]
    public Task Fo0004Fix_UsesTheBodyToken() => AllRulesFixTest<OuterTokenToBodyTokenFix>.VerifyAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, CancellationToken cancellationToken)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 8, CancellationToken = cancellationToken }, async (id, _) => await Task.Delay(id, {|FO0004:cancellationToken|}));
            }
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, CancellationToken cancellationToken)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 8, CancellationToken = cancellationToken }, async (id, ct) => await Task.Delay(id, ct));
            }
        }
        """);

    [Fact]
    public Task Fo0005Fix_SetsTheLimit() => AllRulesFixTest<ExplicitLimitFix>.VerifyAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, CancellationToken cancellationToken)
            {
                await Parallel.{|FO0005:ForEachAsync|}(ids, cancellationToken, async (id, ct) => await Task.Delay(id, ct));
            }
        }
        """, """
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, CancellationToken cancellationToken)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50, CancellationToken = cancellationToken }, async (id, ct) => await Task.Delay(id, ct));
            }
        }
        """);
}
