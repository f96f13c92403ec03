using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.Rules;

using Test = RuleTest<OuterTokenInLoopBodyAnalyzer, OuterTokenToBodyTokenFix>;

/// <summary>FO0004: an outer token passed inside a loop body that has its own.</summary>
public sealed class OuterTokenInLoopBodyTests
{
    [Fact]
    public Task Analyze_OuterParameterFieldAndSourceToken_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            private readonly CancellationTokenSource _shutdown = new();

            async Task RunAsync(int[] ids, CancellationToken cancellationToken)
            {
                var cts = new CancellationTokenSource();
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4, CancellationToken = cancellationToken }, async (id, token) =>
                {
                    await Task.Delay(id, {|FO0004:cancellationToken|});
                    await Task.Delay(id, {|FO0004:_shutdown.Token|});
                    await Task.Delay(id, {|FO0004:cts.Token|});
                });
            }
        }
        """);

    [Fact]
    public Task Analyze_OuterTokenInFanOutAsyncAndForAsync_Flagged() => Test.AnalyzeAsync("""
        using FanOut;

        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                var lengths = await ids.FanOutAsync(async (id, token) =>
                {
                    await Task.Delay(id, {|FO0004:ct|});
                    return id;
                }, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(8) }, ct);
                await Parallel.ForAsync(0, 10, new ParallelOptions { MaxDegreeOfParallelism = 4 }, async (i, token) => await Task.Delay(i, {|FO0004:ct|}));
            }
        }
        """, withFanOut: true);

    [Fact]
    public Task Analyze_BodyTokenOrTokensMadeFromIt_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken outer)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4, CancellationToken = outer }, async (id, token) =>
                {
                    await Task.Delay(id, token);
                    using var linked = CancellationTokenSource.CreateLinkedTokenSource(outer, token);
                    await Task.Delay(id, linked.Token);
                    await Task.Delay(id, CancellationToken.None);
                });
                await Task.Delay(1, outer);
            }
        }
        """);

    [Fact]
    public Task Fix_OuterToken_ReplacedByBodyToken() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken cancellationToken)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4, CancellationToken = cancellationToken }, async (id, token) =>
                {
                    await Task.Delay(id, {|FO0004:cancellationToken|});
                });
            }
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken cancellationToken)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4, CancellationToken = cancellationToken }, async (id, token) =>
                {
                    await Task.Delay(id, token);
                });
            }
        }
        """);

    [Fact]
    public Task Fix_DiscardedBodyToken_NamedAndUsed() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4 }, async (id, _) => await Task.Delay(id, {|FO0004:ct|}));
            }
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids, CancellationToken ct)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 4 }, async (id, ct2) => await Task.Delay(id, ct2));
            }
        }
        """);
}
