using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;

using StackExchange.Redis;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>
/// A private <c>redis-server</c> on a free loopback port, in a temp folder, without persistence; never the system service.
/// <see cref="RestartAsync"/> kills it and starts a fresh one on the same port (all data lost, as a crash without persistence).
/// </summary>
public sealed class RedisServer : IAsyncLifetime
{
    private static readonly TimeSpan s_startTimeout = TimeSpan.FromSeconds(10);

    private readonly string _folder = Directory.CreateTempSubdirectory("fanout-redis-").FullName;
    private Process? _process;

    /// <summary>The port it listens on.</summary>
    public int Port { get; } = FreePort();

    /// <summary>The StackExchange.Redis configuration string.</summary>
    public string Endpoint => string.Create(CultureInfo.InvariantCulture, $"127.0.0.1:{Port}");

    /// <summary>A client connection to it, shared by the tests of a class.</summary>
    public ConnectionMultiplexer Connection { get; private set; } = null!;

    public async Task InitializeAsync()
    {
        await StartAsync();
        Connection = await Connect();
    }

    /// <summary>A fresh connection that fails fast (no backlog) and reconnects on its own.</summary>
    public Task<ConnectionMultiplexer> Connect() => ConnectionMultiplexer.ConnectAsync(new ConfigurationOptions
    {
        EndPoints = { Endpoint },
        AbortOnConnectFail = false,
        AsyncTimeout = 2000,
        SyncTimeout = 2000,
        ConnectRetry = 1,
        ReconnectRetryPolicy = new LinearRetry(100),
        BacklogPolicy = BacklogPolicy.FailFast,
    });

    /// <summary>Kills the server, waits <paramref name="down"/>, starts a fresh one on the same port.</summary>
    public async Task RestartAsync(TimeSpan down)
    {
        Stop();
        await Task.Delay(down);
        await StartAsync();
    }

    public async Task DisposeAsync()
    {
        if (Connection is not null)
        {
            await Connection.DisposeAsync();
        }

        Stop();
        Directory.Delete(_folder, recursive: true);
    }

    private async Task StartAsync()
    {
        var info = new ProcessStartInfo("redis-server")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = _folder,
        };
        foreach (var argument in new[] { "--port", Port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--dir", _folder, "--save", "", "--appendonly", "no" })
        {
            info.ArgumentList.Add(argument);
        }

        try
        {
            _process = Process.Start(info)!;
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new InvalidOperationException("redis-server is not installed: .ci/run installs it (apt-get install -y redis-server).", e);
        }

        _process.OutputDataReceived += (_, _) => { };
        _process.ErrorDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
        var deadline = Stopwatch.GetTimestamp();
        while (true)
        {
            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync(IPAddress.Loopback, Port);
                return;
            }
            catch (SocketException) when (Stopwatch.GetElapsedTime(deadline) < s_startTimeout && !_process.HasExited)
            {
                await Task.Delay(20);
            }
        }
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

            process.Dispose();
            _process = null;
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
