using System.Net;

using FanOut.AspNetCore.Admission;
using FanOut.Lab.ServerOverload;

using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

using Npgsql;

namespace FanOut.AspNetCore.Tests.RealServers;

/// <summary>The middleware on real Kestrel (loopback only): real sockets, real disconnects, and a real PostgreSQL behind it.</summary>
public sealed class KestrelTests
{
    [Fact]
    public async Task Kestrel_Saturated_RefusesAtOnceAndAClosedConnectionFreesItsPlace()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        var gate = new Gate();
        await using var app = await StartAsync(
            o => { o.Limit = limit; o.QueuePerPermit = 1; o.RejectionStart = 1; },
            a => a.MapGet("/work", (string id) => gate.PassAsync(id)));
        var admission = app.Services.GetRequiredService<RequestAdmission>();
        using var client = new HttpClient { BaseAddress = new Uri(app.Urls.First()) };

        var a = client.GetAsync("/work?id=a");
        await gate.EnteredAsync();
        using var leave = new CancellationTokenSource();
        var b = client.GetAsync("/work?id=b", leave.Token);
        await Wait.UntilAsync(() => admission.Queued == 1, "b queued");
        using var refused = await client.GetAsync("/work?id=c");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.Equal(TimeSpan.FromSeconds(1), refused.Headers.RetryAfter?.Delta);

        leave.Cancel(); // HttpClient closes b's connection; Kestrel aborts the request
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => b);
        await Wait.UntilAsync(() => admission.Queued == 0, "b's place freed when its connection closed");
        var d = client.GetAsync("/work?id=d");
        await Wait.UntilAsync(() => admission.Queued == 1, "d queued in b's place");
        gate.OpenAll();
        (await a).Dispose();
        using var served = await d;

        Assert.Equal(HttpStatusCode.OK, served.StatusCode);
        Assert.Equal(["a", "d"], gate.Order);
        await Wait.UntilAsync(() => limit.InFlight == 0, "every permit went back");
    }

    [PostgresFact]
    public async Task Postgres_RequestsAndABackgroundLoopShareOneLimit_NeverMoreQueriesThanItAllows()
    {
        await using var server = await PostgresServer.StartAsync();
        // The pool is larger than the limit: the limit, not the pool, must be what bounds the database.
        await using var source = NpgsqlDataSource.Create($"{server.ConnectionString};Maximum Pool Size=20");
        var limit = ConcurrencyLimit.Fixed(3);
        var peak = 0;

        // The database counts the probe queries running at once (this one included), as it sees them.
        const string Probe = "SELECT (SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%fanout-probe%'), pg_sleep(0.02) /* fanout-probe */";

        async Task QueryAsync(CancellationToken cancellationToken)
        {
            await using var connection = await source.OpenConnectionAsync(cancellationToken);
            await using var command = new NpgsqlCommand(Probe, connection);
            var seenByDatabase = (int)(long)(await command.ExecuteScalarAsync(cancellationToken))!;
            int seen;
            while (seenByDatabase > (seen = Volatile.Read(ref peak)) && Interlocked.CompareExchange(ref peak, seenByDatabase, seen) != seen)
            {
            }
        }

        await using var app = await StartAsync(
            o => { o.Limit = limit; o.QueuePerPermit = 100; o.RejectionStart = 1; o.QueueTimeout = TimeSpan.FromMinutes(1); o.NormalWaitPerServiceTime = 100; }, // 30 queued behind 3 permits, by design
            a => a.MapGet("/db", async (HttpContext c) => { await QueryAsync(c.RequestAborted); return "ok"; }));
        using var client = new HttpClient { BaseAddress = new Uri(app.Urls.First()) };

        var requests = Enumerable.Range(0, 30).Select(_ => client.GetAsync("/db")).ToArray();
        var loop = Enumerable.Range(0, 30).FanOutAsync((i, ct) => new ValueTask(QueryAsync(ct)), new FanOutOptions { Limit = limit });
        var responses = await Task.WhenAll(requests);
        await loop;

        Assert.All(responses, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        Assert.InRange(peak, 1, 3);
        Assert.Equal(0, limit.InFlight);
        foreach (var response in responses)
        {
            response.Dispose();
        }
    }

    [PostgresFact]
    public async Task Postgres_FourTimesCapacity_AdaptiveLimitRefusesTheExcessAndServesTheRest()
    {
        await using var server = await PostgresServer.StartAsync();
        await using var backend = new PostgresBackend(server, poolSize: 4, queryTime: TimeSpan.FromMilliseconds(40));
        await backend.WarmAsync();

        var cell = await ServerOverloadRun.RunAsync(OverloadRow.FanOutPriorities, backend, 4, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(2), TimeSpan.FromMilliseconds(400));

        // At 4x every request gets an answer before the client's timeout: the excess refused, not left to hang; and the
        // refusals fall on sheddable requests first. (Goodput within the SLO is the scenario's to measure: the adaptive
        // limit's blind start needs a few seconds to converge, docs/server.md.)
        Assert.True(cell.FailedShare < 0.05, $"{cell.FailedShare:P0} of requests timed out or failed");
        Assert.InRange(cell.RefusedShare, 0.3, 0.95);
        Assert.True(cell.CriticalSuccess > cell.SheddableSuccess, $"critical {cell.CriticalSuccess:P0}, sheddable {cell.SheddableSuccess:P0}");
    }

    private static async Task<WebApplication> StartAsync(Action<FanOutConcurrencyOptions> configure, Action<WebApplication> map)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        builder.Services.AddFanOutConcurrency(configure);
        var app = builder.Build();
        app.UseFanOutConcurrency();
        map(app);
        await app.StartAsync();
        return app;
    }
}
