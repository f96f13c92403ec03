using System.Text.Json;

using FanOut.Downstream;
using FanOut.Downstream.Latency;

namespace FanOut.Cli.Tests.Commands;

/// <summary><c>fanout probe</c>: bad input, an unreachable target, and a short real probe with <c>--json</c>.</summary>
public sealed class ProbeCommandTests
{
    [Theory]
    [InlineData("probe ftp://127.0.0.1/x", "'ftp://127.0.0.1/x'", "http or https")]
    [InlineData("probe not-a-url", "'not-a-url'", "http://127.0.0.1")]
    [InlineData("probe http://127.0.0.1:1/ --method FETCH", "--method 'FETCH'", "GET, POST")]
    [InlineData("probe http://127.0.0.1:1/ --header NoColon", "--header 'NoColon'", "Name: value")]
    [InlineData("probe http://127.0.0.1:1/ --max-concurrency 0", "--max-concurrency 0", "[1, 10000]")]
    [InlineData("probe http://127.0.0.1:1/ --max-requests 2.5", "--max-requests 2.5", "whole number")]
    [InlineData("probe http://127.0.0.1:1/ --duration -1", "--duration -1", "positive")]
    [InlineData("probe http://127.0.0.1:1/ --timeout 0", "--timeout 0", "positive")]
    [InlineData("probe http://127.0.0.1:1/ --slo-p99 abc", "--slo-p99 'abc'", "milliseconds")]
    [InlineData("probe http://127.0.0.1:1/ --body-file /nonexistent/body.json", "--body-file '/nonexistent/body.json'", "readable file")]
    public async Task Probe_BadValue_OneLineErrorAndExitCode2(string commandLine, string namesValue, string namesChoices)
    {
        var cli = new CliHarness();
        cli.AssertUsageError(await cli.RunAsync(commandLine.Split(' ')), namesValue, namesChoices);
        Assert.DoesNotContain("Probing", cli.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_RefusedConnection_OneLineExitCode1AndNothingWritten()
    {
        var port = FreePort();
        var outDir = Path.Combine(Path.GetTempPath(), $"fanout-probe-{Guid.NewGuid():N}");
        var cli = new CliHarness();
        var exit = await cli.RunAsync("probe", $"http://127.0.0.1:{port}/item/1", "--out", outDir);
        Assert.Equal(1, exit);
        var error = cli.Error.ToString().TrimEnd();
        Assert.DoesNotContain("\n", error, StringComparison.Ordinal);
        Assert.Contains($"could not connect to 127.0.0.1:{port}", error, StringComparison.Ordinal);
        Assert.False(Directory.Exists(outDir));
    }

    [Fact]
    public async Task Probe_HttpsToAPlainHttpServer_NamesTheTlsErrorAndExits1()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions());
        var cli = new CliHarness();
        var exit = await cli.RunAsync("probe", $"https://127.0.0.1:{server.BaseAddress.Port}/item/1", "--timeout", "5");
        Assert.Equal(1, exit);
        Assert.Contains($"TLS error talking to 127.0.0.1:{server.BaseAddress.Port}", cli.Error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_ErrorStatus_NamesTheStatusAndExits1()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions());
        var cli = new CliHarness();
        var exit = await cli.RunAsync("probe", new Uri(server.BaseAddress, "nope").ToString(), "--out", Path.GetTempPath());
        Assert.Equal(1, exit);
        Assert.Contains("answered 404", cli.Error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_Json_PrintsOnlyTheDocumentAndWritesTheSameFile()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 4, Queue = 0, Latency = LatencySpec.Parse("fixed:2") });
        var outDir = Path.Combine(Path.GetTempPath(), $"fanout-probe-{Guid.NewGuid():N}");
        try
        {
            var cli = new CliHarness();
            var exit = await cli.RunAsync("probe", new Uri(server.BaseAddress, "item/1").ToString(), "--max-requests", "120", "--header", "X-Probe: test", "--json", "--out", outDir);
            Assert.Equal(0, exit);
            using var document = JsonDocument.Parse(cli.Output);
            var root = document.RootElement;
            Assert.Equal(new Uri(server.BaseAddress, "item/1").ToString(), root.GetProperty("url").GetString());
            Assert.Equal(120, root.GetProperty("requestsSent").GetInt64());
            Assert.True(root.GetProperty("levels").GetArrayLength() >= 1);
            var level = root.GetProperty("levels")[0];
            foreach (var name in new[] { "concurrency", "requests", "ok", "failures", "okPerSecond", "latencyP50Ms", "latencyP95Ms", "latencyP99Ms" })
            {
                Assert.True(level.TryGetProperty(name, out _), name);
            }

            foreach (var name in new[] { "sigma", "kappa", "lambda", "peakConcurrency", "r2" })
            {
                Assert.True(root.GetProperty("usl").TryGetProperty(name, out _), name);
            }

            var recommendation = root.GetProperty("recommendation");
            foreach (var name in new[] { "limit", "ratePerSecond", "reason", "okPerSecond", "latencyP99Ms" })
            {
                Assert.True(recommendation.TryGetProperty(name, out _), name);
            }

            var code = recommendation.GetProperty("code");
            Assert.Contains("ConcurrencyLimit.Fixed(", code.GetProperty("fanOut").GetString(), StringComparison.Ordinal);
            Assert.Contains("MaxDegreeOfParallelism", code.GetProperty("parallelForEachAsync").GetString(), StringComparison.Ordinal);
            Assert.Contains("SemaphoreSlim(", code.GetProperty("semaphoreSlim").GetString(), StringComparison.Ordinal);
            Assert.Equal(cli.Output.Trim(), File.ReadAllText(Path.Combine(outDir, "probe.json")).Trim());
        }
        finally
        {
            if (Directory.Exists(outDir))
            {
                Directory.Delete(outDir, recursive: true);
            }
        }
    }

    internal static int FreePort()
    {
        using var listener = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
    }
}
