using FanOut.Analyzers.CodeFixes;
using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.Rules;

using Test = RuleTest<UnboundedWhenAllAnalyzer, WhenAllToBoundedFanOutFix>;

/// <summary>
/// Issue 26 item 1: FO0003 says nothing about code the FanOut packages recommend or print (a gate inside the projected
/// work, a Polly pipeline, an HttpClient whose handlers may hold a limit), and reports the loop form in top-level
/// statements as in methods. Each false positive of the issue is a case here, beside a near miss that is still flagged.
/// </summary>
public sealed class UnboundedWhenAllLimitedWorkTests
{
    [Fact]
    public Task Analyze_ProbePrintedSemaphoreSnippet_NotFlagged() => Test.AnalyzeWithAsync("""
        using System.Threading.RateLimiting;

        class C
        {
            async Task RunAsync(IEnumerable<int> items, CancellationToken cancellationToken)
            {
                // `fanout probe`'s SemaphoreSlim snippet for 6 at once and 50 requests/s, as it prints it.
                using var rate = new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions { TokenLimit = 5, TokensPerPeriod = 5, ReplenishmentPeriod = TimeSpan.FromMilliseconds(100), QueueLimit = int.MaxValue, AutoReplenishment = true }); // System.Threading.RateLimiting
                using var gate = new SemaphoreSlim(6);
                var ct = cancellationToken;
                await Task.WhenAll(items.Select(async item => { await gate.WaitAsync(ct); try { using var lease = await rate.AcquireAsync(1, ct); await CallAsync(item, ct); } finally { gate.Release(); } }));
            }

            static Task CallAsync(int item, CancellationToken ct) => Task.Delay(item, ct);
        }
        """, TestReferences.RateLimiting);

    [Fact]
    public Task Analyze_RateLimiterAndConcurrencyLimitGates_NotFlagged() => Test.AnalyzeWithAsync("""
        using System.Threading.RateLimiting;
        using FanOut;

        class C
        {
            async Task RunAsync(int[] ids, RateLimiter rate, ConcurrencyLimit limit)
            {
                await Task.WhenAll(ids.Select(async id => { using var lease = await rate.AcquireAsync(); await Task.Delay(id); }));
                await Task.WhenAll(ids.Select(async id => { using var lease = rate.AttemptAcquire(); if (lease.IsAcquired) await Task.Delay(id); }));
                await Task.WhenAll(ids.Select(async id => { if (await limit.WaitAsync()) { try { await Task.Delay(id); } finally { limit.Release(); } } }));
                await Task.WhenAll(ids.Select(async id => { if (limit.TryAcquire()) { try { await Task.Delay(id); } finally { limit.Release(); } } }));
                await Task.WhenAll(ids.Select(async id => { using var lease = await limit.AsRateLimiter().AcquireAsync(); await Task.Delay(id); }));
            }
        }
        """, TestReferences.RateLimiting);

    [Fact]
    public Task Analyze_GateInsideTheCalledMethodOrLoop_NotFlagged() => Test.AnalyzeAsync("""
        class C
        {
            private readonly SemaphoreSlim _gate = new(8);

            async Task RunAsync(IEnumerable<int> ids)
            {
                await Task.WhenAll(ids.Select(GatedAsync));
                await Task.WhenAll(ids.Select(id => GatedAsync(id)));
                var tasks = new List<Task>();
                foreach (var id in ids)
                    tasks.Add(GatedAsync(id));
                await Task.WhenAll(tasks);
            }

            async Task GatedAsync(int id)
            {
                await _gate.WaitAsync();
                try { await Task.Delay(id); } finally { _gate.Release(); }
            }
        }
        """);

    [Fact]
    public Task Analyze_GateOutsideTheProjectedWork_Flagged() => Test.AnalyzeAsync("""
        class C
        {
            private readonly SemaphoreSlim _gate = new(8);

            async Task RunAsync(IEnumerable<int> ids)
            {
                // Taken once around the whole fan-out, the gate holds nothing back: every item still starts at once.
                await _gate.WaitAsync();
                try { await {|FO0003:Task.WhenAll(ids.Select(id => UngatedAsync(id)))|}; } finally { _gate.Release(); }
            }

            static Task UngatedAsync(int id) => Task.Delay(id);
        }
        """);

    [Fact]
    public Task Analyze_PollyPipelineOverAConcurrencyLimit_NotFlagged() => Test.AnalyzeWithAsync("""
        using FanOut;
        using Polly;

        class C
        {
            async Task RunAsync(IEnumerable<int> ids, ResiliencePipeline pipeline, ResiliencePipeline<string> typed)
            {
                await Task.WhenAll(ids.Select(id => pipeline.ExecuteAsync(async ct => await Task.Delay(id, ct)).AsTask()));
                var names = await Task.WhenAll(ids.Select(async id => await typed.ExecuteAsync(ct => ValueTask.FromResult(id.ToString()))));
            }
        }
        """, TestReferences.Polly);

    [Fact]
    public Task Analyze_HttpClientWithHandlersConfiguredOutOfSight_NotFlagged()
    {
        var references = TestReferences.HttpClientFactory.Add(TestReferences.RateLimiting);
        return Test.AnalyzeWithAsync("""
            using System.Net.Http;
            using System.Net.Http.Json;

            class C(HttpClient injected, IHttpClientFactory factory)
            {
                private readonly HttpClient _http = injected;

                async Task RunAsync(IEnumerable<string> urls, HttpMessageHandler handler)
                {
                    // AddFanOutLimit() may sit in the client's handler pipeline, registered where the analyzer does not look.
                    var pages = await Task.WhenAll(urls.Select(url => _http.GetStringAsync(url)));
                    var named = await Task.WhenAll(urls.Select(url => factory.CreateClient("orders").GetStringAsync(url)));
                    var items = await Task.WhenAll(urls.Select(url => injected.GetFromJsonAsync<int[]>(url)));
                    var own = new HttpClient(handler);
                    await Task.WhenAll(urls.Select(url => own.GetAsync(url)));
                }
            }
            """, [.. references]);
    }

    [Fact]
    public Task Analyze_HttpClientVisiblyWithoutALimitingHandler_Flagged() => Test.AnalyzeWithAsync("""
        using System.Net.Http;

        class C
        {
            private static readonly HttpClient s_http = new();

            async Task RunAsync(IEnumerable<string> urls)
            {
                await {|FO0003:Task.WhenAll(urls.Select(url => s_http.GetStringAsync(url)))|};
                var plain = new HttpClient(new HttpClientHandler());
                await {|FO0003:Task.WhenAll(urls.Select(url => plain.GetAsync(url)))|};
            }
        }
        """, [.. TestReferences.HttpClientFactory]);

    [Fact]
    public Task Analyze_InjectedHttpClientWithoutHttpClientFactory_Flagged() => Test.AnalyzeAsync("""
        using System.Net.Http;

        class C(HttpClient http)
        {
            // No Microsoft.Extensions.Http, no FanOut.Http: nothing can have put a limit in this client's handlers unseen.
            async Task<string[]> RunAsync(IEnumerable<string> urls) =>
                await {|FO0003:Task.WhenAll(urls.Select(url => http.GetStringAsync(url)))|};
        }
        """, withFanOut: true);

    [Fact]
    public Task Analyze_LoopFormInTopLevelStatements_Flagged() => Test.AnalyzeProgramAsync("""
        var ids = Enumerable.Range(0, args.Length * 100);
        var tasks = new List<Task>();
        foreach (var id in ids)
            tasks.Add(Task.Delay(id));
        await {|FO0003:Task.WhenAll(tasks)|};
        """);

    [Fact]
    public Task Fix_LoopFormInTopLevelStatements_BecomesFanOutAsync() => Test.FixProgramAsync("""
        using FanOut;

        var names = args.ToList();
        var tasks = new List<Task<int>>();
        foreach (var name in names)
        {
            tasks.Add(LengthAsync(name));
        }

        var lengths = await {|FO0003:Task.WhenAll(tasks)|};
        Console.WriteLine(lengths.Sum());

        static Task<int> LengthAsync(string name, CancellationToken cancellationToken = default) => Task.FromResult(name.Length);
        """, """
        using FanOut;

        var names = args.ToList();
        var lengths = await names.FanOutAsync(50, async (name, ct) => await LengthAsync(name, ct));
        Console.WriteLine(lengths.Sum());

        static Task<int> LengthAsync(string name, CancellationToken cancellationToken = default) => Task.FromResult(name.Length);
        """, withFanOut: true);
}
