using System.Diagnostics;
using System.Globalization;
using System.Text.Json;

namespace FanOut.Cli.Tests.Watch;

/// <summary>
/// Issue 39 item 1: <c>fanout watch</c> attaches to a real child process over its diagnostics port (EventPipe), sees its
/// limits and their decisions live, detaches on Ctrl+C and ends when the process exits; it says in one line why it cannot
/// attach. Every wait is for a line of output or an exit, never for the clock.
/// </summary>
[Collection(WatchedProcess.Collection)]
public sealed class WatchCommandTests
{
    [Fact]
    public async Task Watch_Json_StreamsStatesAndChangesOfTheLimits_ThenDetachesOnCtrlC()
    {
        await using var target = await WatchedProcess.StartAsync();
        using var watch = ChildCli.Start("watch", Id(target), "--json", "--interval", "0.2");

        // Live update: the adaptive limit "orders" changes against the target's cap of 12 and says why; both limits report states.
        await watch.WaitForOutputAsync("\"event\":\"change\"", seconds: 60);
        await watch.WaitForOutputAsync("\"name\":\"fixed\"", seconds: 60);
        await watch.InterruptAsync();

        Assert.Equal(0, await watch.WaitForExitAsync(60));
        var lines = watch.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(l => JsonDocument.Parse(l).RootElement).ToList();
        Assert.Equal("attached", lines[0].GetProperty("event").GetString());
        Assert.Equal(target.Id, lines[0].GetProperty("processId").GetInt32());
        var detached = lines[^1];
        Assert.Equal(("detached", "stopped"), (detached.GetProperty("event").GetString(), detached.GetProperty("why").GetString()));

        var orders = lines.Where(l => l.GetProperty("event").GetString() == "state" && l.GetProperty("name").GetString() == "orders").ToList();
        Assert.NotEmpty(orders);
        Assert.All(orders, s => Assert.Equal("adaptive", s.GetProperty("kind").GetString()));
        Assert.All(orders, s => Assert.InRange(s.GetProperty("limit").GetInt32(), 1, 256));
        var fixedStates = lines.Where(l => l.GetProperty("event").GetString() == "state" && l.GetProperty("name").GetString() == "fixed").ToList();
        Assert.All(fixedStates, s => Assert.Equal(3, s.GetProperty("limit").GetInt32()));

        var changes = lines.Where(l => l.GetProperty("event").GetString() == "change").ToList();
        Assert.All(changes, c => Assert.Equal("orders", c.GetProperty("name").GetString()));
        Assert.All(changes, c => Assert.NotEqual(c.GetProperty("from").GetInt32(), c.GetProperty("to").GetInt32()));
        Assert.All(changes, c => Assert.False(string.IsNullOrEmpty(c.GetProperty("reason").GetString())));

        // Changes and states of one limit share its id.
        var id = orders[0].GetProperty("limitId").GetInt64();
        Assert.All(changes, c => Assert.Equal(id, c.GetProperty("limitId").GetInt64()));
        Assert.False(target.HasExited, "detaching must leave the process running");
    }

    [Fact]
    public async Task Watch_ProcessExits_SaysSoAndEnds()
    {
        await using var target = await WatchedProcess.StartAsync();
        using var watch = ChildCli.Start("watch", Id(target), "--interval", "0.2");
        await watch.WaitForOutputAsync("orders (adaptive): limit ", seconds: 60);

        await target.StopAsync();

        Assert.Equal(0, await watch.WaitForExitAsync(60));
        Assert.Contains($"process {target.Id} (FanOut.WatchTarget) exited.", watch.Output, StringComparison.Ordinal);
        Assert.StartsWith($"watching process {target.Id} (FanOut.WatchTarget): limit states every 0.2 s", watch.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Watch_ByName_FindsTheProcess()
    {
        await using var target = await WatchedProcess.StartAsync();
        using var watch = ChildCli.Start("watch", "FanOut.WatchTarget", "--json", "--interval", "0.2");
        await watch.WaitForOutputAsync("\"event\":\"state\"", seconds: 60);
        await watch.InterruptAsync();
        Assert.Equal(0, await watch.WaitForExitAsync(60));
        Assert.Contains($"\"processId\":{target.Id}", watch.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Watch_NoSuchProcessId_SaysSoInOneLine()
    {
        var id = UnusedProcessId();
        using var watch = ChildCli.Start("watch", id.ToString(CultureInfo.InvariantCulture));
        Assert.Equal(ExitCodes.CannotAttach, await watch.WaitForExitAsync(60));
        Assert.Equal($"fanout watch: no process with id {id} is running.", watch.Output.Trim());
    }

    [Fact]
    public async Task Watch_NoProcessOfThatName_SaysSoAndListsTheDotNetProcesses()
    {
        using var watch = ChildCli.Start("watch", "no-such-app");
        Assert.Equal(ExitCodes.CannotAttach, await watch.WaitForExitAsync(60));
        var line = Assert.Single(watch.Output.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.StartsWith("fanout watch: no .NET process named 'no-such-app' is running (running .NET processes: ", line, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Watch_NotADotNetProcess_SaysItHasNoDiagnosticsPort()
    {
        using var sleep = Process.Start("sleep", ["60"]);
        try
        {
            using var watch = ChildCli.Start("watch", sleep.Id.ToString(CultureInfo.InvariantCulture));
            Assert.Equal(ExitCodes.CannotAttach, await watch.WaitForExitAsync(60));
            Assert.Equal($"fanout watch: process {sleep.Id} (sleep) has no .NET diagnostics port: it is not a .NET process, or it runs with DOTNET_EnableDiagnostics=0.", watch.Output.Trim());
        }
        finally
        {
            sleep.Kill();
            await sleep.WaitForExitAsync();
        }
    }

    [Fact]
    public async Task Watch_ProcessWithoutFanOut_SaysFanOutIsNotThere()
    {
        await using var target = await WatchedProcess.StartAsync("idle");
        using var watch = ChildCli.Start("watch", Id(target), "--attach-timeout", "1");
        Assert.Equal(ExitCodes.CannotAttach, await watch.WaitForExitAsync(60));
        Assert.Equal(
            $"fanout watch: process {target.Id} (FanOut.WatchTarget) shows no FanOut: it has not loaded FanOut, or has created no limit yet (nothing answered in 1 s; --attach-timeout waits longer).",
            watch.Output.Trim());
        Assert.False(target.HasExited);
    }

    [OtherUserFact]
    public async Task Watch_ProcessOfAnotherUser_SaysItIsNotPermitted()
    {
        await using var target = await WatchedProcess.StartAsync();
        var info = new ProcessStartInfo(OtherUserFactAttribute.RunUser) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var arg in new[] { "-u", "nobody", "--", "dotnet", Path.Combine(AppContext.BaseDirectory, "FanOut.Cli.dll"), "watch", Id(target) })
        {
            info.ArgumentList.Add(arg);
        }

        // DOTNET_CLI_HOME: nobody's home is not writable; the host must not try to set up a first run there.
        info.Environment["DOTNET_CLI_HOME"] = Path.GetTempPath();
        using var watch = Process.Start(info)!;
        var error = watch.StandardError.ReadToEndAsync();
        var output = await watch.StandardOutput.ReadToEndAsync();
        await watch.WaitForExitAsync();

        Assert.Equal(ExitCodes.CannotAttach, watch.ExitCode);
        Assert.Equal(
            $"fanout watch: not permitted to attach to process {target.Id} (FanOut.WatchTarget): run fanout watch as the user that runs the process (or as root).",
            (output + await error).Trim());
    }

    [Theory]
    [InlineData("--interval", "0", "fanout: --interval 0 is outside [0.1, 60] seconds: use e.g. --interval 0.5.")]
    [InlineData("--attach-timeout", "9999", "fanout: --attach-timeout 9999 is outside [1, 600] seconds: use e.g. --attach-timeout 30.")]
    [InlineData("--interval", "soon", "fanout: --interval 'soon' is not a number: use a number of seconds from 0.1 to 60, e.g. --interval 0.5. Commands: list, run, serve, report, probe, watch; see 'fanout --help'.")]
    public async Task Watch_BadOption_NamesTheValueAndTheValidRange(string option, string value, string expected)
    {
        using var watch = ChildCli.Start("watch", "1", option, value);
        Assert.Equal(ExitCodes.Usage, await watch.WaitForExitAsync(60));
        Assert.Equal(expected, watch.Output.Trim());
    }

    private static string Id(WatchedProcess target) => target.Id.ToString(CultureInfo.InvariantCulture);

    /// <summary>A process id nobody uses right now (above the kernel's usual pid_max).</summary>
    private static int UnusedProcessId()
    {
        for (var id = 4_000_000; ; id++)
        {
            try
            {
                using var _ = Process.GetProcessById(id);
            }
            catch (ArgumentException)
            {
                return id;
            }
        }
    }
}
