using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace FanOut.Lab.ServerOverload;

/// <summary>
/// A throwaway PostgreSQL: Debian's binaries (/usr/lib/postgresql/N/bin), run as the <c>postgres</c> user in a temp
/// folder, listening on a free loopback port only; stopped and deleted on dispose.
/// </summary>
public sealed class PostgresServer : IAsyncDisposable
{
    /// <summary>The line that installs what this needs.</summary>
    public const string InstallLine = "apt-get install -y postgresql";

    private readonly string _bin;
    private readonly string _folder;

    private PostgresServer(string bin, string folder, int port)
    {
        _bin = bin;
        _folder = folder;
        Port = port;
    }

    /// <summary>The loopback port it listens on.</summary>
    public int Port { get; }

    /// <summary>A connection string for the <c>postgres</c> superuser (trust auth on loopback), without pool settings.</summary>
    public string ConnectionString => $"Host=127.0.0.1;Port={Port};Username=postgres;Database=postgres";

    /// <summary>Why it cannot start here (not installed, not root, no postgres user), or null when it can.</summary>
    public static string? WhyNot()
    {
        if (FindBin() is null)
        {
            return $"PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): {InstallLine}";
        }

        if (!OperatingSystem.IsLinux() || Environment.UserName != "root")
        {
            return "starting PostgreSQL as the postgres user needs root (runuser)";
        }

        return null;
    }

    /// <summary>Starts one; throws with the reason when it cannot (see <see cref="WhyNot"/>).</summary>
    public static async Task<PostgresServer> StartAsync(int maxConnections = 100)
    {
        if (WhyNot() is { } reason)
        {
            throw new InvalidOperationException(reason);
        }

        var bin = FindBin()!;
        var folder = Directory.CreateTempSubdirectory("fanout-pg-").FullName;
        var server = new PostgresServer(bin, folder, FreeLoopbackPort());
        try
        {
            await RunAsync("chown", ["postgres", folder]).ConfigureAwait(false);
            var data = Path.Combine(folder, "data");
            await RunAsPostgresAsync(Path.Combine(bin, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]).ConfigureAwait(false);
            var settings = $"-p {server.Port} -c listen_addresses=127.0.0.1 -k {folder} -c max_connections={maxConnections} -c fsync=off";
            await RunAsPostgresAsync(Path.Combine(bin, "pg_ctl"), ["-D", data, "-o", settings, "-l", Path.Combine(folder, "log"), "-w", "-t", "60", "start"]).ConfigureAwait(false);
            return server;
        }
        catch
        {
            await server.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    /// <summary>Stops the server (immediate) and deletes its folder.</summary>
    public async ValueTask DisposeAsync()
    {
        var data = Path.Combine(_folder, "data");
        if (File.Exists(Path.Combine(data, "postmaster.pid")))
        {
            try
            {
                await RunAsPostgresAsync(Path.Combine(_bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]).ConfigureAwait(false);
            }
            catch (InvalidOperationException)
            {
                // Already gone: the folder goes anyway.
            }
        }

        try
        {
            Directory.Delete(_folder, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private static string? FindBin() =>
        Directory.Exists("/usr/lib/postgresql")
            ? Directory.GetDirectories("/usr/lib/postgresql").Select(d => Path.Combine(d, "bin")).Where(b => File.Exists(Path.Combine(b, "pg_ctl"))).OrderDescending().FirstOrDefault()
            : null;

    private static int FreeLoopbackPort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private static Task RunAsPostgresAsync(string program, IReadOnlyList<string> arguments) =>
        RunAsync("runuser", ["-u", "postgres", "--", program, .. arguments]);

    private static async Task RunAsync(string program, IReadOnlyList<string> arguments)
    {
        var start = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true, WorkingDirectory = "/tmp" };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"could not start {program}");
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync().ConfigureAwait(false);
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{program} {string.Join(' ', arguments)} exited {process.ExitCode}: {(await error.ConfigureAwait(false)).Trim()} {(await output.ConfigureAwait(false)).Trim()}");
        }
    }
}
