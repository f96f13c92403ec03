using FanOut.Analyzers.Tests.Infrastructure;

namespace FanOut.Analyzers.Tests.Seeds;

/// <summary>
/// The code blocks of the seeds (../shared/seeds/*.txt), copied here as fixtures and run through all five rules at
/// once. Markup marks every diagnostic expected; code without markup must raise none. Where a snippet calls something
/// the seed leaves undefined (a database, an HTTP client), a stub with the same shape stands in, named in a comment.
/// </summary>
public sealed class SeedSnippetTests
{
    /// <summary>Seed 000 (000_501b81ed9e953635.txt), "When to pick Parallel.ForEach": recommended, CPU + sync I/O body.</summary>
    [Fact]
    public Task Seed000_ParallelForEachHashingFiles_NotFlagged() => AllRulesTest.VerifyAsync("""
        using System.Collections.Concurrent;
        using System.IO;
        using System.Security.Cryptography;

        class Seed000Hashing
        {
            void Run()
            {
                var files = Directory.GetFiles(@"C:\data", "*.bin");
                var hashes = new ConcurrentDictionary<string, string>();

                Parallel.ForEach(
                    files,
                    new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount },
                    file =>
                    {
                        using var stream = File.OpenRead(file);
                        byte[] hash = SHA256.HashData(stream);   // CPU + sync I/O, no await
                        hashes[file] = Convert.ToHexString(hash);
                    });
            }
        }
        """);

    /// <summary>
    /// Seed 000, "The hard rule": the anti-patterns it describes in prose (SomeAsyncCall().Result or
    /// .GetAwaiter().GetResult() inside the body; an async lambda that "silently becomes async void"), written out.
    /// </summary>
    [Fact]
    public Task Seed000_BlockingAndAsyncBodiesInParallelForEach_Flagged() => AllRulesTest.VerifyAsync("""
        class Seed000AntiPatterns
        {
            async Task RunAsync(string[] files)
            {
                Parallel.ForEach(files, file =>
                {
                    var text = {|FO0002:SomeAsyncCall(file).Result|};
                    var again = {|FO0002:SomeAsyncCall(file).GetAwaiter().GetResult()|};
                });
                Parallel.ForEach(files, {|FO0001:async|} file => await SomeAsyncCall(file));
                await Task.Yield();
            }

            static Task<string> SomeAsyncCall(string file) => Task.FromResult(file);
        }
        """);

    /// <summary>
    /// Seed 000, "When to pick Parallel.ForEachAsync": recommended (limit 20, the body's token passed on). The seed's
    /// db.Products query and pricing HttpClient are stubbed with methods of the same shape.
    /// </summary>
    [Fact]
    public Task Seed000_ForEachAsyncCappedAt20WithBodyToken_NotFlagged() => AllRulesTest.VerifyAsync("""
        record Price(decimal Value);

        class Seed000ForEachAsync
        {
            async Task RunAsync(CancellationToken ct)
            {
                var ids = await LoadProductIdsAsync(ct);                   // stub for db.Products.Select(p => p.Id).ToListAsync(ct)

                await Parallel.ForEachAsync(
                    ids,
                    new ParallelOptions
                    {
                        MaxDegreeOfParallelism = 20,
                        CancellationToken = ct
                    },
                    async (id, token) =>
                    {
                        var price = await GetPriceAsync($"/price/{id}", token);   // stub for client.GetFromJsonAsync<Price>
                        await SavePriceAsync(id, price, token);   // never blocks a pool thread
                    });
            }

            static Task<List<int>> LoadProductIdsAsync(CancellationToken ct) => Task.FromResult(new List<int> { 1, 2, 3 });
            static Task<Price> GetPriceAsync(string url, CancellationToken ct) => Task.FromResult(new Price(1m));
            static Task SavePriceAsync(int id, Price price, CancellationToken ct) => Task.CompletedTask;
        }
        """);

    /// <summary>
    /// Seed 000, "Two details that matter": the mistake it warns of in prose ("pass it to every async call inside, not
    /// the outer ct"), written into its own ForEachAsync snippet.
    /// </summary>
    [Fact]
    public Task Seed000_ForEachAsyncBodyPassingOuterCt_Flagged() => AllRulesTest.VerifyAsync("""
        record Price(decimal Value);

        class Seed000OuterToken
        {
            async Task RunAsync(List<int> ids, CancellationToken ct)
            {
                await Parallel.ForEachAsync(
                    ids,
                    new ParallelOptions
                    {
                        MaxDegreeOfParallelism = 20,
                        CancellationToken = ct
                    },
                    async (id, token) =>
                    {
                        var price = await GetPriceAsync($"/price/{id}", {|FO0004:ct|});
                        await SavePriceAsync(id, price, {|FO0004:ct|});
                    });
            }

            static Task<Price> GetPriceAsync(string url, CancellationToken ct) => Task.FromResult(new Price(1m));
            static Task SavePriceAsync(int id, Price price, CancellationToken ct) => Task.CompletedTask;
        }
        """);

    /// <summary>Seed 000, "When to pick Task.WhenAll": recommended, three named tasks, results read after the await.</summary>
    [Fact]
    public Task Seed000_WhenAllOverThreeNamedTasks_NotFlagged() => AllRulesTest.VerifyAsync("""
        record Profile; record Order; record Alert;
        record Dashboard(Profile Profile, Order[] Orders, Alert[] Alerts);

        class Seed000WhenAll
        {
            async Task<Dashboard> RunAsync(int userId, CancellationToken ct)
            {
                Task<Profile> profile = LoadProfileAsync(userId, ct);
                Task<Order[]> orders = LoadOrdersAsync(userId, ct);
                Task<Alert[]> alerts = LoadAlertsAsync(userId, ct);

                await Task.WhenAll(profile, orders, alerts);

                // Each task is complete here; .Result no longer blocks.
                var dashboard = new Dashboard(profile.Result, orders.Result, alerts.Result);
                return dashboard;
            }

            static Task<Profile> LoadProfileAsync(int userId, CancellationToken ct) => Task.FromResult(new Profile());
            static Task<Order[]> LoadOrdersAsync(int userId, CancellationToken ct) => Task.FromResult(Array.Empty<Order>());
            static Task<Alert[]> LoadAlertsAsync(int userId, CancellationToken ct) => Task.FromResult(Array.Empty<Alert>());
        }
        """);

    /// <summary>Seed 000, "The trap with Task.WhenAll": the unbounded list, "a denial-of-service attack on your own downstream".</summary>
    [Fact]
    public Task Seed000_WhenAllOverUnboundedIds_Flagged() => AllRulesTest.VerifyAsync("""
        class Seed000Trap
        {
            Task RunAsync(List<int> ids) => {|FO0003:Task.WhenAll(ids.Select(id => CallApiAsync(id)))|};

            static Task CallApiAsync(int id) => Task.Delay(id);
        }
        """);

    /// <summary>
    /// Seed 000, "The benchmark: 500 simulated I/O calls": WhenAll_Unbounded starts 500 at once (FO0003), the default
    /// ForEachAsync runs ProcessorCount at once for I/O (FO0005); Dop50 is the recommended bounded form.
    /// </summary>
    [Fact]
    public Task Seed000_FanOutBench_UnboundedAndDefaultFlaggedDop50Not() => AllRulesTest.VerifyAsync("""
        public class FanOutBench
        {
            private readonly int[] _items = Enumerable.Range(0, 500).ToArray();
            private static Task IoAsync(CancellationToken ct = default) => Task.Delay(20, ct);

            public Task WhenAll_Unbounded() =>
                {|FO0003:Task.WhenAll(_items.Select(_ => IoAsync()))|};

            public Task ForEachAsync_DefaultDop() =>
                Parallel.{|FO0005:ForEachAsync|}(_items, async (_, ct) => await IoAsync(ct));

            public Task ForEachAsync_Dop50() =>
                Parallel.ForEachAsync(
                    _items,
                    new ParallelOptions { MaxDegreeOfParallelism = 50 },
                    async (_, ct) => await IoAsync(ct));
        }
        """);

    /// <summary>
    /// Seed 001 (001_8d33c7003962ea02.txt), I/O benchmark. The seed recommends WhenAll here; FO0003 flags it anyway,
    /// because OperationCount is not a compile-time constant (the seed runs it up to 100, seed 000 warns about exactly
    /// this shape). The default-DOP ForEachAsync over Task.Delay is FO0005: the lab measured it 50x slower on 2 cores.
    /// </summary>
    [Fact]
    public Task Seed001_IoBenchmark_WhenAllAndDefaultForEachAsyncFlagged() => AllRulesTest.VerifyAsync("""
        public class IOBoundTaskBenchmarks
        {
            public int OperationCount;

            public int OperationDurationMs;

            public async Task WenAll()
            {
                // creating an array of tasks
                var tasks = Enumerable.Range(0, OperationCount).Select(async i =>
                {
                    // doing I/O Bound task
                    await Task.Delay(OperationDurationMs);
                })
                .ToArray();

                // calling all tasks
                await {|FO0003:Task.WhenAll(tasks)|};
            }

            public async Task ParallelForEach()
            {
                // performing tasks for each collection item in parallel
                await Parallel.{|FO0005:ForEachAsync|}(Enumerable.Range(0, OperationCount), async (item, _) =>
                {
                    // doing I/O Bound task
                    await Task.Delay(OperationDurationMs);
                });
            }
        }
        """);

    /// <summary>
    /// Seed 001, CPU benchmark: ForEachAsync over CPU work at the default limit is the seed's recommendation and is not
    /// flagged. Its "WhenAll" projects synchronous lambdas over a non-constant count and is flagged by FO0003.
    /// </summary>
    [Fact]
    public Task Seed001_CpuBenchmark_ForEachAsyncNotFlagged() => AllRulesTest.VerifyAsync("""
        public class CPUBoundTaskBenchmarks
        {
            public int OperationCount;

            public int CalculationCount;

            public async Task WenAll()
            {
                // creating an array of tasks
                var tasks = Enumerable.Range(0, OperationCount).Select(_ =>
                {
                    // computationally intensive task
                    for (int i = 0; i < CalculationCount; i++)
                    {
                        Math.Pow(i, 2);
                    }
                    return Task.CompletedTask;
                })
                .ToArray();

                // calling all tasks
                await {|FO0003:Task.WhenAll(tasks)|};
            }

            public async Task ParallelForEach()
            {
                // performing tasks for each collection item in parallel
                await Parallel.ForEachAsync(Enumerable.Range(0, OperationCount), (item, _) =>
                {
                    // computationally intensive task
                    for (int i = 0; i < CalculationCount; i++)
                    {
                        Math.Pow(i, 2);
                    }
                    return ValueTask.CompletedTask;
                });
            }
        }
        """);

    /// <summary>Seed 001, "To change the number of threads": Parallel.ForEach with options and a synchronous body.</summary>
    [Fact]
    public Task Seed001_ParallelForEachWithOptions_NotFlagged() => AllRulesTest.VerifyAsync("""
        class Seed001Options
        {
            void Run()
            {
                var options = new ParallelOptions
                {
                    MaxDegreeOfParallelism = 4 // the desired number of threads
                };

                // put options into the method
                Parallel.ForEach(Enumerable.Range(1, 100), options, i =>
                {
                    // your processing
                });
            }
        }
        """);

    /// <summary>
    /// Seed 002 (002_471f48bc28b1ada9.txt): the TPL cases. Parallel.For @ 4 with Thread.Sleep and ForEachAsync @ 4/@ 40
    /// (body token passed) are not flagged; ForEachAsync with defaults is FO0005 ("the worst of both worlds"). The
    /// seed's snippets are cut off mid-block in the write-up; the closing braces are restored.
    /// </summary>
    [Fact]
    public Task Seed002_TplCases_OnlyDefaultForEachAsyncFlagged() => AllRulesTest.VerifyAsync("""
        class Seed002Tpl
        {
            async Task RunAsync()
            {
                var workload = Enumerable
                  .Range(0, 100)
                  .Select(i => (Index: i, Delay: Random.Shared.Next(10, 50)))
                  .ToArray();

                // Using Parallel.For with concurrency of 4
                await InstrumentedRun("Parallel.For @ 4", () => {
                  Parallel.For(0, 100,
                    new ParallelOptions { MaxDegreeOfParallelism = 4 },
                    index => {
                      Thread.Sleep(workload[index].Delay); // ⭐️ Simulate work
                    });

                  return Task.CompletedTask;
                });

                // Using Parallel.ForEachAsync with concurrency of 4
                await InstrumentedRun("Parallel.ForEachAsync @ 4", async () =>
                  await Parallel.ForEachAsync(workload,
                    new ParallelOptions { MaxDegreeOfParallelism = 4 },
                    async (item, cancel) => {
                      await Task.Delay(item.Delay, cancel); // ⭐️ Simulate work
                    }));

                // Using Parallel.ForEachAsync with concurrency of 40
                await InstrumentedRun("Parallel.ForEachAsync @ 40", async () =>
                  await Parallel.ForEachAsync(workload,
                    new ParallelOptions { MaxDegreeOfParallelism = 40 },
                    async (item, cancel) => {
                      await Task.Delay(item.Delay, cancel); // ⭐️ Simulate work
                    }));

                // Using Parallel.ForEachAsync with concurrency unset
                await InstrumentedRun("Parallel.ForEachAsync (Default)", async () =>
                  await Parallel.{|FO0005:ForEachAsync|}(workload, async (item, cancel) => {
                    await Task.Delay(item.Delay, cancel); // ⭐️ Simulate work
                  }));
            }

            static Task InstrumentedRun(string name, Func<Task> test) => test();
        }
        """);

    /// <summary>
    /// Seed 002, the Channel case: every writer started at once by a projection of 100 items. The seed recommends it;
    /// FO0003 flags it, as the lab found its speed is WhenAll's unbounded concurrency, not the channel (a channel held to
    /// 4 workers took the same 799 ms as DOP 4). Braces the write-up lost are restored.
    /// </summary>
    [Fact]
    public Task Seed002_ChannelWriters_FlaggedAsUnbounded() => AllRulesTest.VerifyAsync("""
        using System.Threading.Channels;

        class Seed002Channel
        {
            async Task RunAsync()
            {
                var workload = Enumerable
                  .Range(0, 100)
                  .Select(i => (Index: i, Delay: Random.Shared.Next(10, 50)));

                var channel = Channel.CreateUnbounded<int>();

                async Task Run(ChannelWriter<int> writer, int id, int delay) {
                  await Task.Delay(delay); // ⭐️ Simulate work
                  await writer.WriteAsync(id);
                }

                async Task Receive(ChannelReader<int> reader) {
                  while (await reader.WaitToReadAsync()) {
                    if (reader.TryRead(out var id)) {
                      // No work here, but you can log to see the output stream
                    }
                  }
                }

                var receiveTask = Receive(channel.Reader); // Set up the reader
                var processingTasks = workload // Execute the writers
                  .Select(e => Run(channel.Writer, e.Index, e.Delay));

                await {|FO0003:Task.WhenAll(processingTasks)|} // Wait for everything to complete
                  .ContinueWith(_ => channel.Writer.Complete());

                await receiveTask;
            }
        }
        """);

    /// <summary>
    /// Seed 003 (003_64d182cba7046d91.txt): the sync, async and ValueTask methods are not flagged; its
    /// ParallelForEachAsync awaits a 1 s delay at the default limit (FO0005), which the lab measured at 3 waves of 2.
    /// </summary>
    [Fact]
    public Task Seed003_AsyncVsSyncBenchmark_DefaultForEachAsyncFlagged() => AllRulesTest.VerifyAsync("""
        public class AsyncVsSyncBenchmark
        {
            private const int DelayMs = 1000;
            private readonly List<int> numbers = new() { 1, 2, 3, 4, 5 };

            public void SyncMethod()
            {
                Thread.Sleep(DelayMs);
            }

            public async Task AsyncMethod()
            {
                await Task.Delay(DelayMs);
            }

            public async ValueTask ValueTaskMethod()
            {
                await Task.Delay(DelayMs);
            }

            public async Task ParallelForEachAsync()
            {
                await Parallel.{|FO0005:ForEachAsync|}(numbers, async (num, _) =>
                {
                    await Task.Delay(DelayMs);
                });
            }
        }
        """);
}
