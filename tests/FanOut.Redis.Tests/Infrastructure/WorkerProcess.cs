using System.Diagnostics;
using System.Text.Json;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>A child process running <c>FanOut.Redis.WorkerProcess</c> (copied next to the tests by the project reference).</summary>
public sealed class WorkerProcess : IDisposable
{
    private readonly Process _process;
    private readonly Task<string> _stdout;
    private readonly Task<string> _stderr;

    private WorkerProcess(Process process)
    {
        _process = process;
        _stdout = process.StandardOutput.ReadToEndAsync();
        _stderr = process.StandardError.ReadToEndAsync();
    }

    /// <summary>Starts a worker with <paramref name="arguments"/>.</summary>
    public static WorkerProcess Start(params string[] arguments)
    {
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "FanOut.Redis.FleetWorker.dll"));
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        return new WorkerProcess(Process.Start(info)!);
    }

    /// <summary>Waits for the exit (at most <paramref name="timeout"/>) and returns the exit code and the report's JSON.</summary>
    public async Task<(int ExitCode, JsonElement Report, string Output)> FinishAsync(TimeSpan timeout)
    {
        await _process.WaitForExitAsync().WaitAsync(timeout);
        var output = await _stdout;
        var errors = await _stderr;
        var line = output.Split('\n').FirstOrDefault(l => l.StartsWith("report ", StringComparison.Ordinal));
        Assert.True(line is not null, $"No report from the worker (exit {_process.ExitCode}): {output} {errors}");
        return (_process.ExitCode, JsonDocument.Parse(line["report ".Length..]).RootElement.Clone(), output + errors);
    }

    /// <summary>Kills the worker as a crash would: no lease is returned.</summary>
    public void Kill()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit();
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            Kill();
        }

        _process.Dispose();
    }
}
