namespace FanOut.Benchmarks;

/// <summary>The host's load averages (Linux), printed beside every measurement so a reader can tell a quiet run from a shared one.</summary>
internal static class HostLoad
{
    /// <summary>The one-minute load average, or "n/a" where the system has none.</summary>
    public static string OneMinute() => Figures(1);

    /// <summary>The 1-, 5- and 15-minute load averages, or "n/a".</summary>
    public static string Averages() => Figures(3);

    private static string Figures(int count)
    {
        try
        {
            return File.Exists("/proc/loadavg") ? string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(count)) : "n/a";
        }
        catch (IOException)
        {
            return "n/a";
        }
    }
}
