using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace FanOut.Redis.FleetWorker;

/// <summary>
/// A private <c>redis-server</c> on a free loopback port, in a temp folder, without persistence (never the system service),
/// for the fleet tests and the <c>downstream-fleet</c> lab scenario. <see cref="RestartAsync"/> kills it and starts a fresh
/// one on the same port: all data lost, as a crash without persistence.
/// </summary>
public sealed class LocalRedisServer : IAsyncDisposable
{
    /// <summary>The executable started.</summary>
    public const string Executable = "redis-server";

    private static readonly TimeSpan s_startTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan s_retryDelay = TimeSpan.FromMilliseconds(20);

    private readonly string _folder;
    private readonly string _executable;
    private readonly IReadOnlyList<string> _arguments;
    private readonly Action<int>? _stopped;
    private IReadOnlyDictionary<string, string> _environment = new Dictionary<string, string>();
    private Process? _process;

    private LocalRedisServer(string folder, int port, string executable, IReadOnlyList<string> arguments, Action<int>? stopped)
    {
        _folder = folder;
        Port = port;
        _executable = executable;
        _arguments = arguments;
        _stopped = stopped;
    }

    /// <summary>True when <see cref="Executable"/> is on the PATH.</summary>
    public static bool IsInstalled => IsOnPath(Executable);

    /// <summary>Stops the server's process (SIGSTOP) until <see cref="Resume"/>: it keeps its connections and answers nothing, as a hung server.</summary>
    public void Suspend() => Signal("STOP");

    /// <summary>Lets a <see cref="Suspend"/>ed server run again (SIGCONT).</summary>
    public void Resume() => Signal("CONT");

    /// <summary>The folder the server runs in (its config and data).</summary>
    public string Folder => _folder;

    /// <summary>True when <paramref name="executable"/> is on the PATH.</summary>
    public static bool IsOnPath(string executable) =>
        (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Any(folder => File.Exists(Path.Combine(folder, executable)));

    /// <summary>The port it listens on.</summary>
    public int Port { get; }

    /// <summary>The StackExchange.Redis configuration string: <c>127.0.0.1:PORT</c>.</summary>
    public string Endpoint => string.Create(CultureInfo.InvariantCulture, $"127.0.0.1:{Port}");

    /// <summary>Starts a server in a new temp folder under <paramref name="parentFolder"/> (the system temp folder when null).</summary>
    /// <exception cref="InvalidOperationException">redis-server is not installed, or did not start listening.</exception>
    public static Task<LocalRedisServer> StartAsync(string? parentFolder = null) => StartAsync(parentFolder, []);

    /// <summary>
    /// Starts a server with <paramref name="extraArguments"/> after the defaults (e.g. <c>--replicaof 127.0.0.1 PORT</c>), in a
    /// new temp folder under <paramref name="parentFolder"/>.
    /// </summary>
    /// <exception cref="InvalidOperationException">redis-server is not installed, or did not start listening.</exception>
    public static Task<LocalRedisServer> StartAsync(string? parentFolder, IReadOnlyList<string> extraArguments) =>
        StartAsync(parentFolder, Executable, DefaultArguments(extraArguments));

    /// <summary>
    /// Starts a server with the default arguments under an environment: <paramref name="environment"/> makes it from the
    /// server's new temp folder under <paramref name="parentFolder"/>, once that exists and before the server first starts (it
    /// may build files there, e.g. a library for <c>LD_PRELOAD</c>); <paramref name="stopped"/> is told the id of each of the
    /// server's processes once it has ended (killed, or exited without listening), to clean up what such a library leaves behind.
    /// </summary>
    /// <exception cref="InvalidOperationException">redis-server is not installed, or did not start listening.</exception>
    public static Task<LocalRedisServer> StartAsync(string? parentFolder, Func<string, Task<IReadOnlyDictionary<string, string>>> environment, Action<int> stopped)
    {
        ArgumentNullException.ThrowIfNull(environment);
        ArgumentNullException.ThrowIfNull(stopped);
        return StartAsync(parentFolder, Executable, DefaultArguments([]), environment, stopped);
    }

    /// <summary>
    /// Starts <paramref name="executable"/> (redis-server or redis-sentinel) with the arguments <paramref name="arguments"/>
    /// makes from its temp folder and free loopback port, and waits until it listens.
    /// </summary>
    /// <exception cref="InvalidOperationException">The executable is not installed, or did not start listening.</exception>
    public static Task<LocalRedisServer> StartAsync(string? parentFolder, string executable, Func<string, int, IReadOnlyList<string>> arguments) =>
        StartAsync(parentFolder, executable, arguments, environment: null, stopped: null);

    private static async Task<LocalRedisServer> StartAsync(
        string? parentFolder, string executable, Func<string, int, IReadOnlyList<string>> arguments, Func<string, Task<IReadOnlyDictionary<string, string>>>? environment, Action<int>? stopped)
    {
        ArgumentNullException.ThrowIfNull(arguments);
        var folder = Path.Combine(parentFolder ?? Path.GetTempPath(), $"fanout-redis-{Guid.NewGuid():N}");
        Directory.CreateDirectory(folder);
        var port = FreePort();
        var server = new LocalRedisServer(folder, port, executable, arguments(folder, port), stopped);
        try
        {
            if (environment is not null)
            {
                server._environment = await environment(folder).ConfigureAwait(false);
            }

            await server.StartProcessAsync().ConfigureAwait(false);
            return server;
        }
        catch
        {
            await server.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Kills the server, waits <paramref name="down"/>, starts a fresh one on the same port.</summary>
    public async Task RestartAsync(TimeSpan down)
    {
        Stop();
        await Task.Delay(down).ConfigureAwait(false);
        await StartProcessAsync().ConfigureAwait(false);
    }

    /// <summary>Kills the server as a crash would; <see cref="StartAgainAsync"/> starts a fresh one on the same port.</summary>
    public void Kill() => Stop();

    /// <summary>Starts a fresh server on the same port after <see cref="Kill"/> (all data lost).</summary>
    public Task StartAgainAsync() => StartProcessAsync();

    /// <summary>Stops the server and deletes its folder.</summary>
    public ValueTask DisposeAsync()
    {
        Stop();
        if (Directory.Exists(_folder))
        {
            Directory.Delete(_folder, recursive: true);
        }

        return ValueTask.CompletedTask;
    }

    private async Task StartProcessAsync()
    {
        var info = new ProcessStartInfo(_executable)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = _folder,
        };
        foreach (var argument in _arguments)
        {
            info.ArgumentList.Add(argument);
        }

        foreach (var (name, value) in _environment)
        {
            info.Environment[name] = value;
        }

        try
        {
            _process = Process.Start(info) ?? throw new InvalidOperationException($"{_executable} did not start.");
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new InvalidOperationException($"{_executable} is not installed (Debian: apt-get install -y {_executable}).", e);
        }

        _process.OutputDataReceived += (_, _) => { };
        _process.ErrorDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
        var started = Stopwatch.GetTimestamp();
        while (true)
        {
            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync(IPAddress.Loopback, Port).ConfigureAwait(false);
                return;
            }
            catch (SocketException) when (Stopwatch.GetElapsedTime(started) < s_startTimeout && !_process.HasExited)
            {
                await Task.Delay(s_retryDelay).ConfigureAwait(false);
            }
            catch (SocketException e)
            {
                throw new InvalidOperationException($"{_executable} did not listen on {Endpoint}.", e);
            }
        }
    }

    private void Signal(string signal)
    {
        var process = _process ?? throw new InvalidOperationException($"{_executable} on {Endpoint} is not running.");
        using var kill = Process.Start(new ProcessStartInfo("kill") { ArgumentList = { "-" + signal, process.Id.ToString(CultureInfo.InvariantCulture) }, UseShellExecute = false })
            ?? throw new InvalidOperationException("kill did not start");
        kill.WaitForExit();
    }

    private void Stop()
    {
        if (_process is { } process)
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
                process.WaitForExit();
            }

            var id = process.Id;
            process.Dispose();
            _process = null;
            _stopped?.Invoke(id);
        }
    }

    private static Func<string, int, IReadOnlyList<string>> DefaultArguments(IReadOnlyList<string> extraArguments) =>
        (folder, port) => [.. new[] { "--port", port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--dir", folder, "--save", string.Empty, "--appendonly", "no" }, .. extraArguments];

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
