// An API that fans out to a downstream for every order, and protects itself when more arrives than it can serve.
// Usage: dotnet run --project samples/OrdersApi -- --inventory http://127.0.0.1:5080/ [--port 5000]
using System.Net;

using FanOut;
using FanOut.AspNetCore;
using FanOut.Http;

var builder = WebApplication.CreateBuilder(args);
var inventory = new Uri(builder.Configuration["inventory"] ?? "http://127.0.0.1:5080/");
builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, builder.Configuration.GetValue("port", 5000)));

// Its own admission: an adaptive limit on requests in flight; beyond it, a short queue served by priority, then 503 +
// Retry-After at once, sheddable requests first.
builder.Services.AddFanOutConcurrency();

// Its calls to the downstream: an adaptive limit per host, backing off when the downstream answers 429 or 503.
builder.Services.AddHttpClient("inventory", http => http.BaseAddress = inventory).AddFanOutLimit();

var app = builder.Build();
app.UseFanOutConcurrency();

// An order's lines are looked up at once (at most 4 at a time per order): the downstream's limit is shared by every request.
app.MapGet("/orders/{id:int}", async (int id, IHttpClientFactory clients, CancellationToken ct) =>
{
    var http = clients.CreateClient("inventory");
    var lines = Enumerable.Range(id * 10, 5);
    var stock = await lines.FanOutAsync(4, async (line, token) => await http.GetStringAsync($"item/{line}", token), ct);
    return Results.Ok(new { id, lines = stock.Length });
}).WithRequestPriority(RequestPriority.Critical);

// Nice to have: refused first when the service is overloaded.
app.MapGet("/recommendations/{id:int}", async (int id, IHttpClientFactory clients, CancellationToken ct) =>
{
    var http = clients.CreateClient("inventory");
    await http.GetStringAsync($"item/{id}", ct);
    return Results.Ok(new { id, recommended = new[] { id + 1, id + 2 } });
}).WithRequestPriority(RequestPriority.Sheddable);

app.MapGet("/healthz", () => "ok").DisableFanOutConcurrency();

app.Lifetime.ApplicationStarted.Register(() => Console.WriteLine($"listening on {string.Join(", ", app.Urls)}"));
app.Run();
