using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;

using FanOut.AspNetCore;
using FanOut.Downstream;
using FanOut.Downstream.Latency;

namespace FanOut.Samples.Tests;

/// <summary>samples/OrdersApi on a free loopback port, in front of a loopback downstream: it answers, and under a burst it sheds sheddable requests first.</summary>
public sealed class OrdersApiSampleTests
{
    [Fact]
    public async Task OrdersApi_Answers_ThenUnderABurst_ServesEveryCriticalOrderAndRefusesOnlyWithRetryAfter()
    {
        await using var inventory = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 8, Queue = 64, Latency = new FixedLatency(40) });
        await using var api = SampleProcess.Start("OrdersApi", "--inventory", inventory.BaseAddress.ToString(), "--port", "0");
        var address = new Uri((await api.WaitForLineAsync("listening on ", seconds: 60))["listening on ".Length..]);
        Assert.Equal(IPAddress.Loopback.ToString(), address.Host);
        using var http = new HttpClient { BaseAddress = address };

        // One order: its five lines were fetched from the downstream.
        var order = await http.GetFromJsonAsync<Order>("orders/7");
        Assert.Equal(new Order(7, 5), order);
        Assert.Equal("ok", await http.GetStringAsync("healthz"));

        // A flood of sheddable recommendations far beyond what 8 downstream slots at 40 ms serve, and while it lasts, a
        // customer's critical orders one after another.
        var recommendations = Enumerable.Range(0, 400).Select(i => http.GetAsync($"recommendations/{i}")).ToList();
        var orders = new List<HttpResponseMessage>();
        var waits = new List<TimeSpan>();
        for (var i = 0; i < 20; i++)
        {
            var sent = Stopwatch.GetTimestamp();
            orders.Add(await http.GetAsync($"orders/{i}"));
            waits.Add(Stopwatch.GetElapsedTime(sent));
        }

        var answers = (await Task.WhenAll(recommendations)).Concat(orders).ToList();
        try
        {
            // Every answer is served or refused at once with Retry-After: nothing failed inside, nothing hung.
            Assert.All(answers, a => Assert.True(
                a.StatusCode == HttpStatusCode.OK || (a.StatusCode == HttpStatusCode.ServiceUnavailable && a.Headers.RetryAfter is not null),
                $"{a.RequestMessage!.RequestUri}: {(int)a.StatusCode}"));

            // Critical orders are never shed: each is served, or refused only once it waited the whole QueueTimeout (1 s by
            // default) for a permit. Beside two busy loops and the rest of the suite, the service's permits can stay taken
            // that long; on a quiet machine every order is served in a fraction of it. The refusals fell on the sheddable requests.
            Assert.All(orders.Zip(waits), o => Assert.True(
                o.First.StatusCode == HttpStatusCode.OK || o.Second >= new FanOutConcurrencyOptions().QueueTimeout,
                $"{o.First.RequestMessage!.RequestUri}: {(int)o.First.StatusCode} after {o.Second.TotalMilliseconds:0} ms: a critical order refused before its queue timeout"));
            Assert.Contains(answers.Take(400), a => a.StatusCode == HttpStatusCode.ServiceUnavailable);
        }
        finally
        {
            foreach (var answer in answers)
            {
                answer.Dispose();
            }
        }
    }

    private sealed record Order(int Id, int Lines);
}
