// One worker of a fleet: every worker calls the same downstream, and all of them together stay within one budget kept
// in Redis. Start as many as you like, on as many machines.
// Usage: dotnet run --project samples/FleetWorker -- --redis 127.0.0.1:6379 --downstream http://127.0.0.1:5080/ --name a --items 200 [--budget 8]
using FanOut;
using FanOut.Redis;

var redis = Option("--redis") ?? "127.0.0.1:6379";
var downstream = new Uri(Option("--downstream") ?? "http://127.0.0.1:5080/");
var name = Option("--name") ?? Environment.MachineName;
var items = int.Parse(Option("--items") ?? "200");
var budget = int.Parse(Option("--budget") ?? "8");

// Every worker sharing the key shares the budget: at most 8 calls in flight across the fleet, however many workers run.
// (Leave Budget out and set Adaptive = new AdaptiveBudgetOptions() for a budget the fleet finds together.)
await using var limit = await RedisConcurrencyLimit.ConnectAsync(redis, new RedisLimitOptions { Key = "inventory-api", Budget = budget });
using var http = new HttpClient { BaseAddress = downstream };

var lengths = await Enumerable.Range(0, items).FanOutAsync(
    async (item, ct) => (await http.GetStringAsync($"item/{name}-{item}", ct)).Length,
    new FanOutOptions { Limit = limit });

Console.WriteLine($"worker {name}: {lengths.Length} items done, {lengths.Sum()} bytes, within a fleet budget of {budget}");
return 0;

string? Option(string option) => args.SkipWhile(a => a != option).Skip(1).FirstOrDefault();
