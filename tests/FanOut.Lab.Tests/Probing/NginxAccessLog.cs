using System.Globalization;

namespace FanOut.Lab.Tests.Probing;

/// <summary>
/// What nginx itself answered, from the access log <see cref="RealServers.StartNginxAsync"/> configures (<c>$msec $status</c>
/// per answer): rates by the server's own timestamps, not the client's wall clock.
/// </summary>
internal static class NginxAccessLog
{
    /// <summary>The most answers with status 200 nginx gave in any one second of its log (0 when there is no log).</summary>
    public static int PeakOkPerSecond(LoopbackProcess nginx) =>
        Answers(nginx).Where(static a => a.Status == 200)
            .GroupBy(static a => (long)Math.Floor(a.Seconds))
            .Select(static second => second.Count())
            .DefaultIfEmpty(0)
            .Max();

    /// <summary>Empties the log, so the next probe is judged on its own answers (nginx keeps its file open and appends).</summary>
    public static void Clear(LoopbackProcess nginx)
    {
        var path = LogPath(nginx);
        if (File.Exists(path))
        {
            using var _ = new FileStream(path, FileMode.Truncate, FileAccess.Write, FileShare.ReadWrite);
        }
    }

    private static IEnumerable<(double Seconds, int Status)> Answers(LoopbackProcess nginx)
    {
        var path = LogPath(nginx);
        if (!File.Exists(path))
        {
            yield break;
        }

        using var reader = new StreamReader(new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite));
        while (reader.ReadLine() is { } line)
        {
            var parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length == 2
                && double.TryParse(parts[0], NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds)
                && int.TryParse(parts[1], NumberStyles.None, CultureInfo.InvariantCulture, out var status))
            {
                yield return (seconds, status);
            }
        }
    }

    private static string LogPath(LoopbackProcess nginx) => Path.Combine(nginx.Folder, "access.log");
}
