using System.Diagnostics;
using System.Text;

namespace FanOut.Cli.Tests;

/// <summary>The built <c>fanout</c> (FanOut.Cli.dll beside the tests) as a real child process, its output collected as it comes.</summary>
internal sealed class ChildCli : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Lock _gate = new();

    private ChildCli(Process process) => _process = process;

    public int Id => _process.Id;

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

    public static ChildCli Start(params string[] args)
    {
        var info = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "FanOut.Cli.dll"));
        foreach (var arg in args)
        {
            info.ArgumentList.Add(arg);
        }

        var child = new ChildCli(new Process { StartInfo = info });
        child._process.OutputDataReceived += (_, e) => child.Append(e.Data);
        child._process.ErrorDataReceived += (_, e) => child.Append(e.Data);
        child._process.Start();
        child._process.BeginOutputReadLine();
        child._process.BeginErrorReadLine();
        return child;
    }

    /// <summary>Waits until the output holds <paramref name="text"/>; fails after <paramref name="seconds"/> or if the child exits first.</summary>
    public async Task WaitForOutputAsync(string text, double seconds = 30)
    {
        var deadline = Stopwatch.GetTimestamp();
        while (!Output.Contains(text, StringComparison.Ordinal))
        {
            Assert.False(_process.HasExited, $"The child exited before printing '{text}':\n{Output}");
            Assert.True(Stopwatch.GetElapsedTime(deadline).TotalSeconds < seconds, $"No '{text}' after {seconds} s:\n{Output}");
            await Task.Delay(20);
        }
    }

    /// <summary>Sends SIGTERM with the <c>kill</c> command, as a script, a container runtime or a supervisor would.</summary>
    public async Task TerminateAsync()
    {
        using var kill = Process.Start("kill", ["-TERM", Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        await kill.WaitForExitAsync();
        Assert.Equal(0, kill.ExitCode);
    }

    /// <summary>
    /// Sends SIGINT, as Ctrl+C in a terminal does. A child that inherited SIGINT ignored (a shell starts background jobs so,
    /// e.g. <c>bash .ci/run &amp;</c>, and .NET keeps an inherited ignore) would never see it: it gets SIGTERM then, which the
    /// CLI's one signal handler (ShutdownSignals) treats the same way.
    /// </summary>
    public async Task InterruptAsync()
    {
        var signal = IgnoresSigint(Id) ? "-TERM" : "-INT";
        using var kill = Process.Start("kill", [signal, Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        await kill.WaitForExitAsync();
        Assert.Equal(0, kill.ExitCode);
    }

    /// <summary>True when the process ignores SIGINT (bit 1 of SigIgn in /proc/PID/status); false where that cannot be read.</summary>
    private static bool IgnoresSigint(int pid)
    {
        try
        {
            var line = File.ReadLines($"/proc/{pid}/status").FirstOrDefault(l => l.StartsWith("SigIgn:", StringComparison.Ordinal));
            return line is not null
                && (ulong.Parse(line["SigIgn:".Length..].Trim(), System.Globalization.NumberStyles.HexNumber, System.Globalization.CultureInfo.InvariantCulture) & 0x2) != 0;
        }
        catch (IOException)
        {
            return false;
        }
    }

    /// <summary>The exit code, once the child has exited (fails after <paramref name="seconds"/>).</summary>
    public async Task<int> WaitForExitAsync(double seconds = 30)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
        await _process.WaitForExitAsync(timeout.Token);
        return _process.ExitCode;
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }

        _process.Dispose();
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
