using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;

using FanOut.Downstream.Stats;

namespace FanOut.Downstream.Tests;

/// <summary>Real HttpClients and bounded polling for tests against a real <see cref="DownstreamServer"/>.</summary>
internal static class TestServer
{
    /// <summary>Every HTTP call in these tests gives up after this; a hang shows as TaskCanceledException, never as a stuck run.</summary>
    public static readonly TimeSpan ClientTimeout = TimeSpan.FromSeconds(10);

    /// <summary>A client with its own connection pool (MaxConnectionsPerServer unlimited, the .NET default).</summary>
    public static HttpClient ClientFor(DownstreamServer server)
        => new(new SocketsHttpHandler { MaxConnectionsPerServer = int.MaxValue }, disposeHandler: true)
        {
            BaseAddress = server.BaseAddress,
            Timeout = ClientTimeout,
        };

    public static async Task<DownstreamStats> GetStatsAsync(HttpClient client)
        => DownstreamStats.FromJson(await client.GetStringAsync(new Uri("stats", UriKind.Relative)));

    /// <summary>Polls /stats every 10 ms until <paramref name="condition"/> holds; fails the test after 10 s.</summary>
    public static async Task<DownstreamStats> WaitForStatsAsync(HttpClient client, Func<DownstreamStats, bool> condition)
    {
        var started = Stopwatch.GetTimestamp();
        while (true)
        {
            var stats = await GetStatsAsync(client);
            if (condition(stats))
            {
                return stats;
            }

            Assert.True(Stopwatch.GetElapsedTime(started) < ClientTimeout, $"Stats never reached the expected state; last: {stats}");
            await Task.Delay(10);
        }
    }

    /// <summary>Polls <paramref name="condition"/> every 5 ms until it holds (work the server finishes after the client has its answer); fails the test with <paramref name="what"/> after 10 s.</summary>
    public static async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        var started = Stopwatch.GetTimestamp();
        while (!condition())
        {
            Assert.True(Stopwatch.GetElapsedTime(started) < ClientTimeout, what);
            await Task.Delay(5);
        }
    }

    /// <summary>GET /item/{id}, returning the status code (and not throwing on 429).</summary>
    public static async Task<HttpStatusCode> GetItemStatusAsync(HttpClient client, int id, CancellationToken cancellationToken = default)
    {
        using var response = await client.GetAsync(new Uri($"item/{id}", UriKind.Relative), cancellationToken);
        return response.StatusCode;
    }

    public static Task<T?> GetJsonAsync<T>(HttpClient client, string path)
        => client.GetFromJsonAsync<T>(new Uri(path, UriKind.Relative));
}
