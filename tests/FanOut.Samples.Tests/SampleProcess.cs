using System.Diagnostics;
using System.Reflection;
using System.Text;

namespace FanOut.Samples.Tests;

/// <summary>A sample run as a real process (<c>dotnet samples/X/bin/.../X.dll args</c>), its output collected as it comes.</summary>
internal sealed class SampleProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Lock _gate = new();

    private SampleProcess(Process process) => _process = process;

    public string Output
    {
        get
        {
            lock (_gate)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>Starts the sample <paramref name="name"/> (its folder under samples/) with <paramref name="args"/>.</summary>
    public static SampleProcess Start(string name, params string[] args)
    {
        var info = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        info.ArgumentList.Add(Dll(name));
        foreach (var arg in args)
        {
            info.ArgumentList.Add(arg);
        }

        var sample = new SampleProcess(new Process { StartInfo = info });
        sample._process.OutputDataReceived += (_, e) => sample.Append(e.Data);
        sample._process.ErrorDataReceived += (_, e) => sample.Append(e.Data);
        sample._process.Start();
        sample._process.BeginOutputReadLine();
        sample._process.BeginErrorReadLine();
        return sample;
    }

    /// <summary>The exit code, once the sample has ended (fails after <paramref name="seconds"/>, with its output).</summary>
    public async Task<int> WaitForExitAsync(double seconds = 120)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
        try
        {
            await _process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            Assert.Fail($"The sample did not end within {seconds} s:\n{Output}");
        }

        // WaitForExitAsync also waits for the output's end: every line is in.
        return _process.ExitCode;
    }

    /// <summary>Waits for a line starting with <paramref name="prefix"/> and returns it (fails if the sample ends first).</summary>
    public async Task<string> WaitForLineAsync(string prefix, double seconds = 120)
    {
        var started = Stopwatch.GetTimestamp();
        while (true)
        {
            if (Output.Split('\n').FirstOrDefault(l => l.StartsWith(prefix, StringComparison.Ordinal)) is { } line)
            {
                return line.TrimEnd('\r');
            }

            Assert.False(_process.HasExited, $"The sample ended before printing '{prefix}':\n{Output}");
            Assert.True(Stopwatch.GetElapsedTime(started).TotalSeconds < seconds, $"No '{prefix}' after {seconds} s:\n{Output}");
            await Task.Delay(20);
        }
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

    private static string Dll(string name)
    {
        var configuration = typeof(SampleProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "Configuration").Value;
        var root = new DirectoryInfo(AppContext.BaseDirectory);
        while (!File.Exists(Path.Combine(root.FullName, "FanOut.slnx")))
        {
            root = root.Parent ?? throw new InvalidOperationException($"No FanOut.slnx above {AppContext.BaseDirectory}");
        }

        var dll = Path.Combine(root.FullName, "samples", name, "bin", configuration!, "net10.0", $"{name}.dll");
        Assert.True(File.Exists(dll), $"The sample is not built: {dll}");
        return dll;
    }

    private void Append(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_gate)
        {
            _output.AppendLine(line);
        }
    }
}
