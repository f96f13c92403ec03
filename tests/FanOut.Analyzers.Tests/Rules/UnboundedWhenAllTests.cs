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

    /// <summary>
    /// A stand-in for FanOut's <c>FanOutAsync(maxConcurrency, body)</c> shortcut, which the fix emits: the fixed code compiles
    /// against it until the library in this repository has it. Declared in the test's own namespace, so once the library has
    /// it too, this one is found first and the call is not ambiguous.
    /// </summary>
    private const string ShortcutStub = """
            static class FanOutShortcut
            {
                public static Task<TResult[]> FanOutAsync<T, TResult>(this IEnumerable<T> source, int maxConcurrency, Func<T, CancellationToken, Task<TResult>> body) => throw new NotImplementedException();

                public static Task FanOutAsync<T>(this IEnumerable<T> source, int maxConcurrency, Func<T, CancellationToken, Task> body) => throw new NotImplementedException();
            }
        """;

    [Fact]
    public Task Fix_ResultProjectionWithFanOut_BecomesFanOutAsyncWithALimitKeepingResults() => Test.FixAsync($$"""
        namespace App
        {
        {{ShortcutStub}}

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
        }
        """, $$"""
        using FanOut;

        namespace App
        {
        {{ShortcutStub}}

            class C
            {
                async Task<string[]> RunAsync(IEnumerable<int> ids)
                {
                    return await ids.FanOutAsync(50, async (id, ct) =>
                    {
                        await Task.Delay(id, ct);
                        return id.ToString();
                    });
                }
            }
        }
        """, withFanOut: true);

    [Fact]
    public Task Fix_ExpressionLambdaWithFanOut_AwaitsTheCallWithTheToken() => Test.FixAsync($$"""
        namespace App
        {
        {{ShortcutStub}}

            class C
            {
                async Task RunAsync(List<int> ids)
                {
                    var prices = await {|FO0003:Task.WhenAll(ids.Select(id => GetPriceAsync(id)).ToArray())|};
                    Console.WriteLine(prices.Sum());
                }

                static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
            }
        }
        """, $$"""
        using FanOut;

        namespace App
        {
        {{ShortcutStub}}

            class C
            {
                async Task RunAsync(List<int> ids)
                {
                    var prices = await ids.FanOutAsync(50, async (id, ct) => await GetPriceAsync(id, ct));
                    Console.WriteLine(prices.Sum());
                }

                static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
            }
        }
        """, withFanOut: true);

    [Fact]
    public Task Fix_MethodGroupWithFanOut_CallsItPerItem() => Test.FixAsync($$"""
        namespace App
        {
        {{ShortcutStub}}

            class C
            {
                async Task RunAsync(int[] ids)
                {
                    await {|FO0003:Task.WhenAll(ids.Select(SaveAsync))|};
                }

                static Task SaveAsync(int id) => Task.Delay(id);
                static Task SaveAsync(int id, CancellationToken cancellationToken) => Task.Delay(id, cancellationToken);
            }
        }
        """, $$"""
        using FanOut;

        namespace App
        {
        {{ShortcutStub}}

            class C
            {
                async Task RunAsync(int[] ids)
                {
                    await ids.FanOutAsync(50, async (item, ct) => await SaveAsync(item, ct));
                }

                static Task SaveAsync(int id) => Task.Delay(id);
                static Task SaveAsync(int id, CancellationToken cancellationToken) => Task.Delay(id, cancellationToken);
            }
        }
        """, withFanOut: true);

    [Fact]
    public Task Fix_AdaptiveAction_BecomesFanOutAsyncWithTheDefaultLimit()
    {
        // The second action: no limit written, FanOut's adaptive default finds it. Compiles against the library as it is.
        var test = new Test(withFanOut: true)
        {
            TestCode = Test.Usings + """
                class C
                {
                    async Task RunAsync(List<int> ids)
                    {
                        var prices = await {|FO0003:Task.WhenAll(ids.Select(id => GetPriceAsync(id)))|};
                    }

                    static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
                }
                """,
            FixedCode = Test.Usings + """
                using FanOut;

                class C
                {
                    async Task RunAsync(List<int> ids)
                    {
                        var prices = await ids.FanOutAsync(async (id, ct) => await GetPriceAsync(id, ct));
                    }

                    static Task<decimal> GetPriceAsync(int id, CancellationToken cancellationToken = default) => Task.FromResult((decimal)id);
                }
                """,
            CodeActionEquivalenceKey = WhenAllToBoundedFanOutFix.AdaptiveKey,
            CodeActionIndex = 1,
        };
        return test.RunAsync();
    }

    [Fact]
    public Task Analyze_LoopThatAddsOneTaskPerItem_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids, string[] names)
            {
                var tasks = new List<Task>();
                foreach (var id in ids)
                    tasks.Add(CallAsync(id));
                await {|FO0003:Task.WhenAll(tasks)|};

                var lengths = new List<Task<int>>();
                foreach (var name in names)
                {
                    lengths.Add(LengthAsync(name));
                }

                var all = await {|FO0003:Task.WhenAll(lengths)|};
            }

            static Task CallAsync(int id) => Task.Delay(id);
            static Task<int> LengthAsync(string name) => Task.FromResult(name.Length);
        }
        """);

    [Fact]
    public Task Analyze_LoopOverSmallLiteralOrDoingMore_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            async Task RunAsync(IEnumerable<int> ids)
            {
                var few = new List<Task>();
                foreach (var id in new[] { 1, 2, 3 })
                    few.Add(Task.Delay(id));
                await Task.WhenAll(few);

                var logged = new List<Task>();
                foreach (var id in ids)
                {
                    Console.WriteLine(id);
                    logged.Add(Task.Delay(id));
                }

                await Task.WhenAll(logged);
            }
        }
        """);

    [Fact]
    public Task Fix_LoopForm_BecomesFanOutAsyncAndTheListGoes() => Test.FixAsync($$"""
        namespace App
        {
        {{ShortcutStub}}

            class C
            {
                async Task<int[]> RunAsync(IEnumerable<string> names)
                {
                    var tasks = new List<Task<int>>();
                    foreach (var name in names)
                    {
                        tasks.Add(LengthAsync(name));
                    }

                    return await {|FO0003:Task.WhenAll(tasks)|};
                }

                static Task<int> LengthAsync(string name, CancellationToken cancellationToken = default) => Task.FromResult(name.Length);
            }
        }
        """, $$"""
        using FanOut;

        namespace App
        {
        {{ShortcutStub}}

            class C
            {
                async Task<int[]> RunAsync(IEnumerable<string> names)
                {
                    return await names.FanOutAsync(50, async (name, ct) => await LengthAsync(name, ct));
                }

                static Task<int> LengthAsync(string name, CancellationToken cancellationToken = default) => Task.FromResult(name.Length);
            }
        }
        """, withFanOut: true);

    [Fact]
    public Task Fix_LoopFormWithoutFanOut_BecomesBoundedForEachAsync() => Test.FixAsync("""
        class C
        {
            async Task RunAsync(int[] ids)
            {
                var tasks = new List<Task>();
                foreach (int id in ids)
                    tasks.Add(Task.Delay(id));
                await {|FO0003:Task.WhenAll(tasks)|};
            }
        }
        """, """
        class C
        {
            async Task RunAsync(int[] ids)
            {
                await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (int id, CancellationToken ct) => await Task.Delay(id, ct));
            }
        }
        """);

    [Fact]
    public Task Fix_LoopFormWhoseListIsUsedAgain_NotOffered() => Test.FixAsync("""
        class C
        {
            async Task<int> RunAsync(IEnumerable<int> ids)
            {
                var tasks = new List<Task>();
                foreach (var id in ids)
                    tasks.Add(Task.Delay(id));
                await {|FO0003:Task.WhenAll(tasks)|};
                return tasks.Count;
            }
        }
        """, """
        class C
        {
            async Task<int> RunAsync(IEnumerable<int> ids)
            {
                var tasks = new List<Task>();
                foreach (var id in ids)
                    tasks.Add(Task.Delay(id));
                await {|FO0003:Task.WhenAll(tasks)|};
                return tasks.Count;
            }
        }
        """);

    [Fact]
    public Task FixAll_ProjectionAndLoopInOneMethod_FixesBoth() => new Test(withFanOut: false)
    {
        TestCode = Test.Usings + """
            class C
            {
                async Task RunAsync(int[] ids, IEnumerable<string> paths)
                {
                    await {|FO0003:Task.WhenAll(paths.Select(path => Task.Delay(path.Length)))|};
                    var tasks = new List<Task>();
                    foreach (var id in ids)
                        tasks.Add(Task.Delay(id));
                    await {|FO0003:Task.WhenAll(tasks)|};
                }
            }
            """,
        FixedCode = Test.Usings + """
            class C
            {
                async Task RunAsync(int[] ids, IEnumerable<string> paths)
                {
                    await Parallel.ForEachAsync(paths, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (path, ct) => await Task.Delay(path.Length, ct));
                    await Parallel.ForEachAsync(ids, new ParallelOptions { MaxDegreeOfParallelism = 50 }, async (id, ct) => await Task.Delay(id, ct));
                }
            }
            """,
    }.RunAsync();

    [Fact]
    public void Descriptors_CarryNoHelpLinkUntilTheProjectHasAHome()
    {
        // Issue 18 item 5: no link to an address nobody owns; one constant (FanOutDiagnostics.HelpLinkBase) sets them all later.
        var descriptors = new Microsoft.CodeAnalysis.Diagnostics.DiagnosticAnalyzer[]
        {
            new AsyncLambdaInParallelLoopAnalyzer(), new BlockingWaitInParallelLoopAnalyzer(), new UnboundedWhenAllAnalyzer(),
            new OuterTokenInLoopBodyAnalyzer(), new DefaultLimitForIoAnalyzer(),
        }.SelectMany(a => a.SupportedDiagnostics).ToArray();

        Assert.Equal(5, descriptors.Length);
        Assert.All(descriptors, d => Assert.Equal(string.Empty, d.HelpLinkUri));
        Assert.All(descriptors, d => Assert.True(File.Exists(Path.Combine(RepositoryRoot(), "docs", "analyzers", d.Id + ".md")), $"docs/analyzers/{d.Id}.md"));
    }

    /// <summary>The clone's root, found from the test's output folder up (not from the source path: CI builds map it).</summary>
    private static string RepositoryRoot()
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "FanOut.slnx")))
        {
            directory = directory.Parent;
        }

        return directory?.FullName ?? throw new InvalidOperationException($"no FanOut.slnx above {AppContext.BaseDirectory}");
    }

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
