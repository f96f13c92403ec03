using FanOut.Lab.Running;
using FanOut.Lab.Tests.Scenarios;

namespace FanOut.Lab.Tests.Running;

public sealed class ChildProcessCaseRunnerTests
{
    private static readonly TinyScenario s_scenario = new();

    [Fact]
    public async Task RunAsync_ChildCrashes_ReturnsFailedCaseWithExitCodeAndLastErrorLine()
    {
        var launcher = new ChildProcessLauncher("sh", ["-c", "echo boom >&2; exit 3", "sh"]);
        var result = await new ChildProcessCaseRunner(launcher, TimeSpan.FromSeconds(30)).RunAsync(s_scenario, new(), 0, CancellationToken.None);
        Assert.False(result.Succeeded);
        Assert.Contains("exited with code 3", result.Error);
        Assert.Contains("boom", result.Error);
        Assert.Equal("Task.WhenAll", result.Strategy);
    }

    [Fact]
    public async Task RunAsync_ChildHangs_IsKilledAtTimeoutAndReported()
    {
        var launcher = new ChildProcessLauncher("sh", ["-c", "sleep 60", "sh"]);
        var result = await new ChildProcessCaseRunner(launcher, TimeSpan.FromMilliseconds(300)).RunAsync(s_scenario, new(), 0, CancellationToken.None);
        Assert.False(result.Succeeded);
        Assert.Contains("timed out", result.Error);
    }

    [Fact]
    public async Task RunAsync_ExecutableMissing_ReturnsFailedCase()
    {
        var launcher = new ChildProcessLauncher("/nonexistent/fanout", []);
        var result = await new ChildProcessCaseRunner(launcher, TimeSpan.FromSeconds(5)).RunAsync(s_scenario, new(), 0, CancellationToken.None);
        Assert.False(result.Succeeded);
        Assert.Contains("could not start", result.Error);
    }

    [Fact]
    public void StartInfo_Arguments_CarryScenarioCaseScaleAndFull()
    {
        var info = new ChildProcessLauncher("dotnet", ["fanout.dll"]).StartInfo("seed000-fanout500", 3, 0.25, full: true, "/tmp/r.json");
        Assert.Equal(["fanout.dll", "child", "--scenario", "seed000-fanout500", "--case", "3", "--scale", "0.25", "--full", "--result", "/tmp/r.json"], info.ArgumentList);
    }
}
