using System.Diagnostics;
using System.Globalization;

using FanOut.Redis.FleetWorker;

namespace FanOut.Redis.Tests.Infrastructure.FakeClock;

/// <summary>
/// A private redis-server (a <see cref="LocalRedisServer"/>: loopback, free port, temp folder, no persistence) whose clock
/// is a test's: <c>TIME</c> in every script and every expiry read <see cref="Now"/>, which only <see cref="SetTime"/> moves.
/// So the lease and budget scripts, which take the time from Redis, run on the same fake clock as the limits' <see cref="TimeProvider"/>.
/// </summary>
/// <remarks>
/// <para>The server runs under libfaketime (<c>FAKETIME_TIMESTAMP_FILE</c> holding an absolute time with a fraction, re-read
/// at every call: <c>FAKETIME_NO_CACHE</c>; the monotonic clock stays real, <c>DONT_FAKE_MONOTONIC</c>). Debian's
/// redis-server links jemalloc, whose initialization recurses into libfaketime and hangs the server, so a shim routing
/// jemalloc's symbols to glibc's allocator (<c>libc-malloc.c</c>, compiled here with gcc into the server's folder) is
/// preloaded first.</para>
/// <para>A half-written time file kills the server: <see cref="SetTime"/> writes a temp file and renames it over (atomic).</para>
/// </remarks>
public sealed class FakeClockRedisServer : IAsyncDisposable
{
    /// <summary>The line that installs what it needs (Debian), for a skipped test's reason.</summary>
    public const string InstallLine = "apt-get install -y redis-server libfaketime gcc";

    private readonly LocalRedisServer _server;
    private readonly string _timeFile;

    private FakeClockRedisServer(LocalRedisServer server, string timeFile, DateTimeOffset start)
    {
        _server = server;
        _timeFile = timeFile;
        Now = start;
    }

    /// <summary>Why a fake-clock server cannot start here (with the line that installs what is missing); null when it can.</summary>
    public static string? MissingReason
    {
        get
        {
            var missing = new[] { LocalRedisServer.IsInstalled ? null : "redis-server", FakeTimeLibrary is null ? "libfaketime" : null, LocalRedisServer.IsOnPath("gcc") ? null : "gcc" }
                .Where(m => m is not null).ToArray();
            return missing.Length == 0 ? null : $"{string.Join(" and ", missing)} not installed: .ci/run installs them ({InstallLine})";
        }
    }

    /// <summary>The port it listens on.</summary>
    public int Port => _server.Port;

    /// <summary>The StackExchange.Redis configuration string: <c>127.0.0.1:PORT</c>.</summary>
    public string Endpoint => _server.Endpoint;

    /// <summary>The server's time: what <c>TIME</c> answers, frozen until the next <see cref="SetTime"/>.</summary>
    public DateTimeOffset Now { get; private set; }

    /// <summary>Debian's libfaketime (any architecture's folder); null when it is not installed.</summary>
    private static string? FakeTimeLibrary =>
        Directory.Exists("/usr/lib") ? Directory.EnumerateFiles("/usr/lib", "libfaketime.so.1", SearchOption.AllDirectories).FirstOrDefault(f => f.Contains("/faketime/", StringComparison.Ordinal)) : null;

    /// <summary>Starts a server whose clock reads <paramref name="start"/>.</summary>
    /// <exception cref="InvalidOperationException">Something it needs is missing (<see cref="MissingReason"/>), the shim did not compile, or the server did not listen.</exception>
    public static async Task<FakeClockRedisServer> StartAsync(DateTimeOffset start)
    {
        if (MissingReason is { } missing)
        {
            throw new InvalidOperationException(missing);
        }

        // libfaketime opens and reads the file at every time call the server makes: in memory (tmpfs) where there is one.
        var timeFile = Path.Combine(Directory.Exists("/dev/shm") ? "/dev/shm" : Path.GetTempPath(), $"fanout-fake-clock-redis-{Guid.NewGuid():N}-now");
        try
        {
            WriteTime(timeFile, start);
            var server = await LocalRedisServer.StartAsync(null, folder => EnvironmentAsync(folder, timeFile), DeleteFakeTimeSegments);
            return new FakeClockRedisServer(server, timeFile, start);
        }
        catch
        {
            DeleteTimeFile(timeFile);
            throw;
        }
    }

    /// <summary>Moves the server's clock to <paramref name="now"/> (atomically: the server never reads a half-written time).</summary>
    public void SetTime(DateTimeOffset now)
    {
        WriteTime(_timeFile, now);
        Now = now;
    }

    /// <summary>Stops the server and deletes its folder and its time file.</summary>
    public async ValueTask DisposeAsync()
    {
        await _server.DisposeAsync();
        DeleteTimeFile(_timeFile);
    }

    private static void WriteTime(string timeFile, DateTimeOffset now)
    {
        var temp = timeFile + ".tmp";
        // libfaketime parses the fraction as a double: 1.251 reads 1.250999, a millisecond early for every expiry. A trailing
        // 5 past the tick (half of 100 ns) makes the truncation land on the written microsecond.
        File.WriteAllText(temp, now.UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss.fffffff", CultureInfo.InvariantCulture) + "5");
        File.Move(temp, timeFile, overwrite: true);
    }

    private static void DeleteTimeFile(string timeFile)
    {
        File.Delete(timeFile);
        File.Delete(timeFile + ".tmp");
    }

    /// <summary>The server's environment: the shim and libfaketime preloaded, the clock read from <paramref name="timeFile"/>.</summary>
    private static async Task<IReadOnlyDictionary<string, string>> EnvironmentAsync(string folder, string timeFile) => new Dictionary<string, string>
    {
        ["LD_PRELOAD"] = $"{await CompileShimAsync(folder)} {FakeTimeLibrary}",
        ["FAKETIME_TIMESTAMP_FILE"] = timeFile,
        ["FAKETIME_NO_CACHE"] = "1",
        ["DONT_FAKE_MONOTONIC"] = "1",
        ["TZ"] = "UTC",
    };

    /// <summary>libfaketime keeps a shared-memory segment and a semaphore per process, removed at a normal exit only.</summary>
    private static void DeleteFakeTimeSegments(int processId)
    {
        if (Directory.Exists("/dev/shm"))
        {
            File.Delete(string.Create(CultureInfo.InvariantCulture, $"/dev/shm/faketime_shm_{processId}"));
            File.Delete(string.Create(CultureInfo.InvariantCulture, $"/dev/shm/sem.faketime_sem_{processId}"));
        }
    }

    private static async Task<string> CompileShimAsync(string folder)
    {
        var source = Path.Combine(AppContext.BaseDirectory, "Infrastructure", "FakeClock", "libc-malloc.c");
        var output = Path.Combine(folder, "libc-malloc.so");
        var info = new ProcessStartInfo("gcc") { RedirectStandardError = true, RedirectStandardOutput = true, UseShellExecute = false };
        foreach (var argument in new[] { "-shared", "-fPIC", "-O2", "-o", output, source, "-ldl" })
        {
            info.ArgumentList.Add(argument);
        }

        using var gcc = Process.Start(info) ?? throw new InvalidOperationException("gcc did not start");
        var errors = gcc.StandardError.ReadToEndAsync();
        await gcc.StandardOutput.ReadToEndAsync();
        await gcc.WaitForExitAsync();
        return gcc.ExitCode == 0 ? output : throw new InvalidOperationException($"gcc could not compile {source}: {await errors}");
    }
}
