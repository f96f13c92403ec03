using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;

namespace FanOut.Benchmarks.Adaptive;

/// <summary>The frame every real-clock measurement's markdown shares: its title and machine line, and its end (the load, the file, the console).</summary>
internal static class RealClockReport
{
    /// <summary>A report begun with <paramref name="title"/> and the machine it runs on.</summary>
    public static StringBuilder Begin(string title)
    {
        var report = new StringBuilder();
        report.AppendLine(CultureInfo.InvariantCulture, $"# {title}");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Machine: {Environment.ProcessorCount} logical cores, {RuntimeInformation.OSDescription}, .NET {Environment.Version}; load average at the start {HostLoad.OneMinute()}.");
        return report;
    }

    /// <summary>Ends <paramref name="report"/> with the load average, writes it to <paramref name="fileName"/> in <paramref name="resultsDirectory"/> and prints it.</summary>
    public static async Task EndAsync(StringBuilder report, string resultsDirectory, string fileName)
    {
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"Load average at the end {HostLoad.OneMinute()}.");
        Directory.CreateDirectory(resultsDirectory);
        var path = Path.Combine(resultsDirectory, fileName);
        await File.WriteAllTextAsync(path, report.ToString());
        Console.WriteLine(report.ToString());
        Console.WriteLine($"written: {path}");
    }
}
