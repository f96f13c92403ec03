using System.Diagnostics;
using System.Globalization;

namespace FanOut.Cli.Tests.Watch;

/// <summary>FanOut.WatchTarget as a real child process: fan-outs under a limit named "orders" (or, "idle", no FanOut at all) until disposed.</summary>
internal sealed class WatchedProcess : IAsyncDisposable
{
    /// <summary>The test classes that start watch targets run one at a time: a watch by name finds exactly one such process.</summary>
    public const string Collection = "watch targets";

    private readonly Process _process;

    private WatchedProcess(Process process) => _process = process;

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>Starts the target and waits for its "ready" line.</summary>
    public static async Task<WatchedProcess> StartAsync(string mode = "fanout")
    {
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "FanOut.WatchTarget.dll"));
        info.ArgumentList.Add(mode);
        var target = new WatchedProcess(Process.Start(info)!);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var ready = await target._process.StandardOutput.ReadLineAsync(timeout.Token);
        Assert.Equal($"ready {target.Id.ToString(CultureInfo.InvariantCulture)}", ready);
        return target;
    }

    /// <summary>Closes its standard input: it stops its work and exits.</summary>
    public async Task StopAsync()
    {
        _process.StandardInput.Close();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await _process.WaitForExitAsync(timeout.Token);
        Assert.Equal(0, _process.ExitCode);
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
        }

        _process.Dispose();
    }
}
