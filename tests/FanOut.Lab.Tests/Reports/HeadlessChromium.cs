using System.Diagnostics;

namespace FanOut.Lab.Tests.Reports;

/// <summary>Debian's chromium, started headless with no network, for one page at a time.</summary>
public static class HeadlessChromium
{
    private static readonly string[] s_names = ["chromium", "chromium-browser", "google-chrome"];
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(60);

    /// <summary>The executable's path, or null when none is on the PATH.</summary>
    public static string? Find() =>
        (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(Path.PathSeparator)
            .SelectMany(dir => s_names.Select(name => Path.Combine(dir, name)))
            .FirstOrDefault(File.Exists);

    /// <summary>Opens <paramref name="page"/> with <paramref name="arguments"/> added; returns stdout and stderr. The profile lives in a temp folder, deleted after.</summary>
    public static async Task<(string Output, string Error, int ExitCode)> RunAsync(string page, params string[] arguments)
    {
        var executable = Find() ?? throw new InvalidOperationException("chromium is not installed");
        var profile = Directory.CreateTempSubdirectory("fanout-chromium-");
        try
        {
            var info = new ProcessStartInfo(executable)
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            foreach (var argument in new[]
            {
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", $"--user-data-dir={profile.FullName}",
            }.Concat(arguments).Append(new Uri(page).AbsoluteUri))
            {
                info.ArgumentList.Add(argument);
            }

            using var process = Process.Start(info)!;
            var output = process.StandardOutput.ReadToEndAsync();
            var error = process.StandardError.ReadToEndAsync();
            using var timeout = new CancellationTokenSource(s_timeout);
            try
            {
                await process.WaitForExitAsync(timeout.Token);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                throw new TimeoutException($"chromium did not finish {page} within {s_timeout.TotalSeconds} s");
            }

            return (await output, await error, process.ExitCode);
        }
        finally
        {
            profile.Delete(recursive: true);
        }
    }
}
