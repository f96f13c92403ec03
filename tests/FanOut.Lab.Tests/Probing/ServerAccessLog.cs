using System.Globalization;

namespace FanOut.Lab.Tests.Probing;

/// <summary>
/// What a real server itself answered, from the access log <see cref="RealServers"/> configures (one line per answer: its
/// time in seconds, its status and, where the server logs it, the microseconds it spent on the request): rates and service
/// times by the server's own clock, which a client starved of CPU cannot skew.
/// </summary>
internal static class ServerAccessLog
{
    /// <summary>The most answers with status 200 the server gave in any one second of its log (0 when there is no log).</summary>
    public static int PeakOkPerSecond(LoopbackProcess server) =>
        Answers(server).Where(static a => a.Status == 200)
            .GroupBy(static a => (long)Math.Floor(a.Seconds))
            .Select(static second => second.Count())
            .DefaultIfEmpty(0)
            .Max();

    /// <summary>
    /// How far the server's own time per request rose: the highest mean service time of any half second with at least
    /// <see cref="MinAnswersPerWindow"/> answers, over the median service time of the whole log (1 when the log has no times).
    /// A server's time per request excludes its wait for a worker, so a rise is the host slowing the service itself.
    /// </summary>
    public static double ServiceTimeRise(LoopbackProcess server)
    {
        var timed = Answers(server).Where(static a => a.Microseconds is not null).ToList();
        if (timed.Count == 0)
        {
            return 1;
        }

        var median = timed.Select(static a => a.Microseconds!.Value).Order().ElementAt(timed.Count / 2);
        var slowest = timed.GroupBy(static a => (long)Math.Floor(a.Seconds * 2))
            .Where(static window => window.Count() >= MinAnswersPerWindow)
            .Select(static window => window.Average(static a => a.Microseconds!.Value))
            .DefaultIfEmpty(median)
            .Max();
        return slowest / median;
    }

    /// <summary>Answers in a half second for its mean to be read (a probe's level runs at least a few dozen).</summary>
    private const int MinAnswersPerWindow = 20;

    /// <summary>Empties the log, so the next probe is judged on its own answers (the server keeps its file open and appends).</summary>
    public static void Clear(LoopbackProcess server)
    {
        var path = LogPath(server);
        if (File.Exists(path))
        {
            using var _ = new FileStream(path, FileMode.Truncate, FileAccess.Write, FileShare.ReadWrite);
        }
    }

    private static IEnumerable<(double Seconds, int Status, double? Microseconds)> Answers(LoopbackProcess server)
    {
        var path = LogPath(server);
        if (!File.Exists(path))
        {
            yield break;
        }

        using var reader = new StreamReader(new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite));
        while (reader.ReadLine() is { } line)
        {
            var parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length is 2 or 3
                && double.TryParse(parts[0], NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds)
                && int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var status))
            {
                double? microseconds = parts.Length == 3 && double.TryParse(parts[2], NumberStyles.Float, CultureInfo.InvariantCulture, out var us) ? us : null;
                yield return (seconds, status, microseconds);
            }
        }
    }

    private static string LogPath(LoopbackProcess server) => Path.Combine(server.Folder, "access.log");
}
