using System.Diagnostics;
using System.Globalization;

namespace FanOut.Cli.Tests.Watch;

/// <summary>
/// Issue 39 item 1: the live view as a person sees it, in a real terminal: <c>fanout watch</c> runs in a headless tmux
/// session (150 x 45), and the test reads the screen with <c>tmux capture-pane</c> until what it waits for is drawn.
/// </summary>
[Collection(WatchedProcess.Collection)]
public sealed class WatchLiveViewTests
{
    [TmuxFact]
    public async Task LiveView_InATerminal_ShowsTheTableTheChartAndTheDecisions_ArrowsChooseAndQQuits()
    {
        await using var target = await WatchedProcess.StartAsync();
        await using var tmux = await Tmux.StartAsync(
            $"dotnet {Path.Combine(AppContext.BaseDirectory, "FanOut.Cli.dll")} watch {target.Id.ToString(CultureInfo.InvariantCulture)} --interval 0.2 --limit orders; echo \"exit code $?\"; sleep 600");

        // The table (both limits, with the header of every column), the chosen limit's chart, and decisions with reasons.
        var screen = await tmux.WaitForScreenAsync(s => s.Contains("> orders", StringComparison.Ordinal) && s.Contains("  fixed", StringComparison.Ordinal)
            && s.Contains("orders  ", StringComparison.Ordinal) && s.Contains(" in flight)", StringComparison.Ordinal));
        Assert.Contains($"fanout watch · process {target.Id} (FanOut.WatchTarget) · 2 limits in use", screen, StringComparison.Ordinal);
        foreach (var column in new[] { "limit (name)", "kind", "in flight", "waiting", "latency / baseline", "overloads/s", "pauses/s", "last decision" })
        {
            Assert.Contains(column, screen, StringComparison.Ordinal);
        }

        Assert.Contains("orders: limit and in flight over the last", screen, StringComparison.Ordinal);
        Assert.Contains("decisions (seconds since attached)", screen, StringComparison.Ordinal);

        // Down chooses the next limit for the chart; q detaches and the process keeps running.
        await tmux.SendKeysAsync("Down");
        await tmux.WaitForScreenAsync(s => s.Contains("> fixed", StringComparison.Ordinal) && s.Contains("fixed: limit and in flight", StringComparison.Ordinal));
        await tmux.SendKeysAsync("q");
        screen = await tmux.WaitForScreenAsync(s => s.Contains("exit code", StringComparison.Ordinal));
        Assert.Contains($"stopped watching process {target.Id} (FanOut.WatchTarget).", screen, StringComparison.Ordinal);
        Assert.Contains("exit code 0", screen, StringComparison.Ordinal);
        Assert.False(target.HasExited);
    }

    /// <summary>A detached tmux session on its own socket (never the user's server), killed and its socket deleted on dispose.</summary>
    private sealed class Tmux : IAsyncDisposable
    {
        private readonly string _socket = Path.Combine(Path.GetTempPath(), $"fanout-watch-{Guid.NewGuid():N}.sock");

        public static async Task<Tmux> StartAsync(string command)
        {
            var tmux = new Tmux();
            await tmux.RunAsync("new-session", "-d", "-x", "150", "-y", "45", command);
            return tmux;
        }

        /// <summary>Reads the screen until <paramref name="drawn"/> holds (fails after 60 s with the last screen).</summary>
        public async Task<string> WaitForScreenAsync(Func<string, bool> drawn)
        {
            var started = Stopwatch.GetTimestamp();
            while (true)
            {
                var screen = await RunAsync("capture-pane", "-p");
                if (drawn(screen))
                {
                    return screen;
                }

                Assert.True(Stopwatch.GetElapsedTime(started) < TimeSpan.FromSeconds(60), $"Not drawn within 60 s; the screen:\n{screen}");
                await Task.Delay(100);
            }
        }

        public Task SendKeysAsync(string key) => RunAsync("send-keys", key);

        public async ValueTask DisposeAsync()
        {
            await RunAsync("kill-server");
            File.Delete(_socket); // tmux leaves its socket file behind
        }

        private async Task<string> RunAsync(params string[] args)
        {
            var info = new ProcessStartInfo("tmux") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
            info.ArgumentList.Add("-S");
            info.ArgumentList.Add(_socket);
            foreach (var arg in args)
            {
                info.ArgumentList.Add(arg);
            }

            using var process = Process.Start(info)!;
            var output = await process.StandardOutput.ReadToEndAsync();
            await process.WaitForExitAsync();
            return output;
        }
    }
}
