using FanOut.Downstream;
using FanOut.Downstream.Latency;

namespace FanOut.Cli.Tests.Commands;

/// <summary>SIGTERM (<c>kill PID</c>) stops every long-running command gracefully, as Ctrl+C does, in a real child process.</summary>
public sealed class SigtermTests
{
    [Fact]
    public async Task Serve_Sigterm_StopsTheServerAndExits0()
    {
        using var child = ChildCli.Start("serve", "--port", "0", "--latency", "fixed:1");
        await child.WaitForOutputAsync("Ctrl+C stops.");
        await child.TerminateAsync();
        Assert.Equal(0, await child.WaitForExitAsync());
        Assert.Contains("Stopped. Served 0", child.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Probe_Sigterm_StopsSendingAndWritesTheLevelsDone()
    {
        await using var server = await DownstreamServer.StartAsync(new DownstreamOptions { Capacity = 1_000, Queue = 0, Latency = LatencySpec.Parse("fixed:5") });
        var outDir = Path.Combine(Path.GetTempPath(), $"fanout-probe-{Guid.NewGuid():N}");
        try
        {
            using var child = ChildCli.Start("probe", new Uri(server.BaseAddress, "item/1").ToString(), "--out", outDir);
            await child.WaitForOutputAsync("1 at once:");
            await child.TerminateAsync();
            Assert.Equal(130, await child.WaitForExitAsync());
            Assert.Contains("interrupted", child.Output, StringComparison.Ordinal);

            // Interrupted before the endpoint showed its limit: never a final recommendation with code to paste.
            Assert.DoesNotContain("Recommendation:", child.Output, StringComparison.Ordinal);
            Assert.DoesNotContain("ConcurrencyLimit.Fixed", child.Output, StringComparison.Ordinal);
            var json = File.ReadAllText(Path.Combine(outDir, "probe.json"));
            Assert.Contains("\"endedBy\": \"interrupted\"", json, StringComparison.Ordinal);
            Assert.Contains("\"concurrency\": 1,", json, StringComparison.Ordinal);
            var sent = server.GetStats();
            await Task.Delay(300);
            Assert.Equal(sent.RequestsServed, server.GetStats().RequestsServed);
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
    public async Task Run_Sigterm_SavesWhatFinishedAndExits130()
    {
        var outDir = Path.Combine(Path.GetTempPath(), $"fanout-run-{Guid.NewGuid():N}");
        try
        {
            using var child = ChildCli.Start("run", "seed003-sync-async", "--in-process", "--scale", "0.1", "--out", outDir);
            await child.WaitForOutputAsync("[1/");
            await child.TerminateAsync();
            Assert.Equal(130, await child.WaitForExitAsync());
            Assert.Contains("interrupted", child.Output, StringComparison.Ordinal);
            Assert.True(File.Exists(Path.Combine(outDir, "results.json")));
        }
        finally
        {
            if (Directory.Exists(outDir))
            {
                Directory.Delete(outDir, recursive: true);
            }
        }
    }
}
