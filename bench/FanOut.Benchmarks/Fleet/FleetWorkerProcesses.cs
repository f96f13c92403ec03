using System.Diagnostics;

namespace FanOut.Benchmarks.Fleet;

/// <summary>
/// The FanOut.Redis.FleetWorker processes of one harness run: started with the same arguments, told "go" together once
/// each has said "ready", and killed on disposal if still running (whatever threw).
/// </summary>
internal sealed class FleetWorkerProcesses : IDisposable
{
    private readonly List<Process> _processes = [];

    /// <summary>Starts <paramref name="count"/> workers with <paramref name="arguments"/>.</summary>
    public static FleetWorkerProcesses Start(int count, IEnumerable<string> arguments)
    {
        var workers = new FleetWorkerProcesses();
        try
        {
            for (var i = 0; i < count; i++)
            {
                var info = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true };
                info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "FanOut.Redis.FleetWorker.dll"));
                foreach (var argument in arguments)
                {
                    info.ArgumentList.Add(argument);
                }

                workers._processes.Add(Process.Start(info) ?? throw new InvalidOperationException("dotnet did not start"));
            }

            return workers;
        }
        catch
        {
            workers.Dispose();
            throw;
        }
    }

    /// <summary>Waits until every worker has printed "ready".</summary>
    public async Task WaitReadyAsync()
    {
        foreach (var process in _processes)
        {
            while (await process.StandardOutput.ReadLineAsync() is { } line && line != "ready")
            {
            }
        }
    }

    /// <summary>Writes <paramref name="line"/> to every worker's standard input.</summary>
    public async Task SendAsync(string line)
    {
        foreach (var process in _processes)
        {
            await process.StandardInput.WriteLineAsync(line);
            await process.StandardInput.FlushAsync();
        }
    }

    /// <summary>Waits for every worker to exit and returns, per worker, its output's first line starting with <paramref name="prefix"/>.</summary>
    public async Task<List<string>> ReportsAsync(string prefix)
    {
        var reports = new List<string>();
        foreach (var process in _processes)
        {
            var text = await process.StandardOutput.ReadToEndAsync();
            await process.WaitForExitAsync();
            reports.Add(text.Split('\n').FirstOrDefault(l => l.StartsWith(prefix, StringComparison.Ordinal))
                ?? throw new InvalidOperationException($"worker {process.Id} gave no report: {text} {await process.StandardError.ReadToEndAsync()}"));
        }

        return reports;
    }

    /// <summary>Kills the workers still running.</summary>
    public void Dispose()
    {
        foreach (var process in _processes)
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }

            process.Dispose();
        }
    }
}
