using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;

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
    [InlineData("probe http://127.0.0.1:1/ --max-concurrency 0", "--max-concurrency 0 is too small", "it must be at least 1 (and at most 10000)")]
    [InlineData("probe http://127.0.0.1:1/ --max-requests 2.5", "--max-requests 2.5 is not a whole number", "a whole number of at least 1")]
    [InlineData("probe http://127.0.0.1:1/ --max-requests -5", "--max-requests -5 is too small", "it must be at least 1, e.g.")]
    [InlineData("probe http://127.0.0.1:1/ --duration -1", "--duration -1", "positive")]
    [InlineData("probe http://127.0.0.1:1/ --timeout 0", "--timeout 0", "positive")]
    [InlineData("probe http://127.0.0.1:1/ --slo-p99 abc", "--slo-p99 'abc'", "milliseconds")]
    [InlineData("probe http://127.0.0.1:1/ --body-file /nonexistent/body.json", "--body-file '/nonexistent/body.json'", "readable file")]
    [InlineData("probe http://127.0.0.1:1/ --max-rate 0", "--max-rate 0", "positive number of requests per second")]
    [InlineData("probe http://127.0.0.1:1/ --max-rate fast", "--max-rate 'fast'", "requests per second")]
    [InlineData("probe https://127.0.0.1:1/ --ca-file /nonexistent/ca.pem", "--ca-file '/nonexistent/ca.pem'", "PEM file of CA certificates")]
    [InlineData("probe https://127.0.0.1:1/ --ca-file /etc/hostname --insecure", "--ca-file '/etc/hostname' and --insecure", "give one")]
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
    public async Task Probe_CaFileWithoutCertificate_OneLineErrorAndExitCode2()
    {
        var file = Path.GetTempFileName();
        try
        {
            await File.WriteAllTextAsync(file, "not a certificate");
            var cli = new CliHarness();
            cli.AssertUsageError(await cli.RunAsync("probe", "https://127.0.0.1:1/", "--ca-file", file), $"--ca-file '{file}' holds no certificate", "PEM file");
        }
        finally
        {
            File.Delete(file);
        }
    }

    [Fact]
    public async Task Probe_NotLoopback_WarnsBeforeSending()
    {
        var cli = new CliHarness();
        var exit = await cli.RunAsync("probe", "http://192.0.2.1:9/", "--timeout", "0.3", "--out", Path.Combine(Path.GetTempPath(), $"fanout-probe-{Guid.NewGuid():N}"));
        Assert.Equal(1, exit);
        Assert.Contains("fanout: warning: 192.0.2.1 is not this machine", cli.Error.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_Json_SaturatedEndpoint_PrintsOnlyTheDocumentWithAFinalRecommendationAndExits0()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 3, Queue = 0, Latency = LatencySpec.Parse("fixed:20") });
        var outDir = Path.Combine(Path.GetTempPath(), $"fanout-probe-{Guid.NewGuid():N}");
        try
        {
            var cli = new CliHarness();
            var exit = await cli.RunAsync("probe", new Uri(server.BaseAddress, "item/1").ToString(), "--header", "X-Probe: test", "--json", "--out", outDir);
            for (var attempt = 1; attempt < 3 && exit == 5; attempt++)
            {
                // Unconfirmed: on a loaded CI host the client itself can stall mid-check and send its arrivals in bursts, which
                // the queue-less server refuses or queues (see ProberKnownAnswerTests; beside two busy loops it read "unconfirmed"
                // for a reason other than the queue). Probe again: an unconfirmed run is no answer, and what is asserted, in
                // full, is the last run's.
                cli = new CliHarness();
                exit = await cli.RunAsync("probe", new Uri(server.BaseAddress, "item/1").ToString(), "--header", "X-Probe: test", "--json", "--out", outDir);
            }

            Assert.Equal(0, exit);
            using var document = JsonDocument.Parse(cli.Output);
            var root = document.RootElement;
            Assert.Equal(new Uri(server.BaseAddress, "item/1").ToString(), root.GetProperty("url").GetString());
            Assert.Equal(20_000, root.GetProperty("maxRequests").GetInt64());
            Assert.True(root.GetProperty("levels").GetArrayLength() >= 3);
            var level = root.GetProperty("levels")[0];
            foreach (var name in new[] { "concurrency", "requests", "ok", "failures", "okPerSecond", "latencyP50Ms", "latencyP95Ms", "latencyP99Ms", "okLittleConcurrency", "latencyStdDevMs" })
            {
                Assert.True(level.TryGetProperty(name, out _), name);
            }

            foreach (var name in new[] { "sigma", "kappa", "lambda", "peakConcurrency", "r2" })
            {
                Assert.True(root.GetProperty("usl").TryGetProperty(name, out _), name);
            }

            var capacity = root.GetProperty("capacity");
            Assert.Equal(3, capacity.GetProperty("within").GetInt32());
            Assert.Equal(4, capacity.GetProperty("beyond").GetInt32());
            Assert.True(root.GetProperty("openLoop").GetProperty("holds").GetBoolean());

            var recommendation = root.GetProperty("recommendation");
            Assert.Equal("final", recommendation.GetProperty("status").GetString());
            Assert.Equal(3, recommendation.GetProperty("limit").GetInt32());
            var code = recommendation.GetProperty("code");
            Assert.Contains("ConcurrencyLimit.Fixed(3)", code.GetProperty("fanOut").GetString(), StringComparison.Ordinal);
            Assert.Contains("MaxDegreeOfParallelism = 3", code.GetProperty("parallelForEachAsync").GetString(), StringComparison.Ordinal);
            Assert.Contains("SemaphoreSlim(3)", code.GetProperty("semaphoreSlim").GetString(), StringComparison.Ordinal);
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

    [Fact]
    public async Task Probe_MaxRequestsBeforeSaturation_SaysAtLeastWithoutCodeAndExits3()
    {
        // 40 ms calls: level 1 takes 50 requests, level 2 another 50; the budget runs out in level 4 (on a quiet host).
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 16, Queue = 0, Latency = LatencySpec.Parse("fixed:40") });
        var outDir = Path.Combine(Path.GetTempPath(), $"fanout-probe-{Guid.NewGuid():N}");
        try
        {
            var cli = new CliHarness();
            var exit = await cli.RunAsync("probe", new Uri(server.BaseAddress, "item/1").ToString(), "--max-requests", "150", "--out", outDir);
            Assert.Equal(3, exit);
            var output = cli.Output;
            Assert.Contains("at most 150 requests (--max-requests)", output, StringComparison.Ordinal);
            Assert.Contains("First answer in", output, StringComparison.Ordinal);
            // Which level the budget ends in depends on how long each level took on the host (2 on a quiet one; a loaded CI
            // host's slower answers make the early levels shorter in requests): any "at least" below the capacity of 16.
            var atLeast = Regex.Match(output, @"At least (\d+) at once \(not final: the endpoint was not saturated\)\.");
            Assert.True(atLeast.Success, output);
            Assert.InRange(int.Parse(atLeast.Groups[1].Value, CultureInfo.InvariantCulture), 1, 8);
            Assert.Contains("--max-requests 150 was spent", output, StringComparison.Ordinal);
            Assert.Contains("No code to paste", output, StringComparison.Ordinal);
            Assert.DoesNotContain("ConcurrencyLimit.Fixed", output, StringComparison.Ordinal);
            Assert.DoesNotContain("Recommendation:", output, StringComparison.Ordinal);
            Assert.Contains("150 requests of a budget of 150", output, StringComparison.Ordinal);
        }
        finally
        {
            if (Directory.Exists(outDir))
            {
                Directory.Delete(outDir, recursive: true);
            }
        }
    }

    [Fact]
    public async Task Probe_EverythingAnswers503_NoRecommendationAndExits4()
    {
        var port = FreePort();
        using var listener = new System.Net.HttpListener();
        listener.Prefixes.Add($"http://127.0.0.1:{port}/");
        listener.Start();
        using var stop = new CancellationTokenSource();
        var serving = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    var context = await listener.GetContextAsync();
                    context.Response.StatusCode = 503;
                    context.Response.Close();
                }
                catch (Exception ex) when (ex is System.Net.HttpListenerException or ObjectDisposedException or InvalidOperationException)
                {
                    return;
                }
            }
        });
        var outDir = Path.Combine(Path.GetTempPath(), $"fanout-probe-{Guid.NewGuid():N}");
        try
        {
            var cli = new CliHarness();
            var exit = await cli.RunAsync("probe", $"http://127.0.0.1:{port}/", "--out", outDir);
            Assert.Equal(4, exit);
            Assert.Contains("No recommendation.", cli.Output, StringComparison.Ordinal);
            Assert.Contains("every level failed", cli.Output, StringComparison.Ordinal);
            Assert.DoesNotContain("ConcurrencyLimit.Fixed", cli.Output, StringComparison.Ordinal);
        }
        finally
        {
            stop.Cancel();
            listener.Stop();
            await serving;
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
