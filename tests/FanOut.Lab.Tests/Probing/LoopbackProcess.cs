using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;

namespace FanOut.Lab.Tests.Probing;

/// <summary>A server binary started by a test on a free loopback port in its own temp folder; stopped (the process
/// tree) and the folder deleted on dispose. Never the system service: its own config, pid file and logs.</summary>
internal sealed class LoopbackProcess : IDisposable
{
    private readonly Process _process;
    private readonly string _folder;
    private readonly string? _quitSignal;

    private LoopbackProcess(Process process, string folder, int port, string scheme, string? quitSignal)
    {
        _process = process;
        _folder = folder;
        _quitSignal = quitSignal;
        BaseAddress = new Uri($"{scheme}://127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}/");
    }

    public Uri BaseAddress { get; }

    /// <summary>The server's temp folder: its config and its logs.</summary>
    public string Folder => _folder;

    /// <summary>The first of <paramref name="candidates"/> (absolute, or looked up on PATH) that exists; null when none.</summary>
    public static string? Find(params string[] candidates) =>
        candidates.Where(Path.IsPathRooted).Concat(candidates.Where(c => !Path.IsPathRooted(c))
            .SelectMany(c => (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(':', StringSplitOptions.RemoveEmptyEntries).Select(d => Path.Combine(d, c))))
            .FirstOrDefault(File.Exists);

    /// <summary>Starts <paramref name="binary"/> with the arguments <paramref name="arguments"/> builds from the temp folder
    /// and port, and waits until the port accepts connections (10 s at most, else throws with the server's log).</summary>
    /// <param name="prefix">The temp folder's name prefix.</param>
    /// <param name="binary">The server's executable.</param>
    /// <param name="arguments">Writes its config into the folder for the port and returns the command line.</param>
    /// <param name="scheme">http or https.</param>
    /// <param name="quitSignal">The signal that stops it gracefully (e.g. QUIT for nginx, so its master reaps its workers); null for SIGKILL of the tree.</param>
    public static async Task<LoopbackProcess> StartAsync(string prefix, string binary, Func<string, int, Task<IEnumerable<string>>> arguments, string scheme = "http", string? quitSignal = null)
    {
        var folder = Directory.CreateTempSubdirectory(prefix).FullName;
        var port = FreePort();
        Process process;
        try
        {
            var info = new ProcessStartInfo(binary) { UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true, WorkingDirectory = folder };
            foreach (var arg in await arguments(folder, port))
            {
                info.ArgumentList.Add(arg);
            }

            process = Process.Start(info)!;
        }
        catch
        {
            Directory.Delete(folder, recursive: true);
            throw;
        }

        var output = new System.Text.StringBuilder();
        process.OutputDataReceived += (_, e) => { lock (output) { output.AppendLine(e.Data); } };
        process.ErrorDataReceived += (_, e) => { lock (output) { output.AppendLine(e.Data); } };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var server = new LoopbackProcess(process, folder, port, scheme, quitSignal);
        var started = Stopwatch.GetTimestamp();
        while (!await AcceptsAsync(port))
        {
            if (process.HasExited || Stopwatch.GetElapsedTime(started) > TimeSpan.FromSeconds(30))
            {
                var logs = string.Join("\n", Directory.EnumerateFiles(folder, "*.log").Select(File.ReadAllText));
                string said;
                lock (output)
                {
                    said = output.ToString();
                }

                server.Dispose();
                throw new InvalidOperationException($"{Path.GetFileName(binary)} did not start on port {port}: {said} {logs}");
            }

            await Task.Delay(20);
        }

        return server;
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            if (_quitSignal is not null)
            {
                using var quit = Process.Start("kill", [$"-{_quitSignal}", _process.Id.ToString(CultureInfo.InvariantCulture)]);
                quit.WaitForExit();
            }

            if (_quitSignal is null || !_process.WaitForExit(TimeSpan.FromSeconds(5)))
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit();
            }
        }

        _process.Dispose();
        Directory.Delete(_folder, recursive: true);
    }

    public static int FreePort()
    {
        using var listener = new TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
    }

    private static async Task<bool> AcceptsAsync(int port)
    {
        try
        {
            using var client = new TcpClient();
            await client.ConnectAsync(System.Net.IPAddress.Loopback, port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
