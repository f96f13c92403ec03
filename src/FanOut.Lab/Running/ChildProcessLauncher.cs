using System.Diagnostics;
using System.Globalization;
using System.Reflection;

namespace FanOut.Lab.Running;

/// <summary>Knows how to start this program again as a child that runs one case.</summary>
/// <param name="FileName">The executable: the apphost, or <c>dotnet</c>.</param>
/// <param name="PrefixArguments">Arguments before the child's own (the assembly path when run through <c>dotnet</c>).</param>
public sealed record ChildProcessLauncher(string FileName, IReadOnlyList<string> PrefixArguments)
{
    /// <summary>The hidden command the child runs.</summary>
    public const string ChildCommand = "child";

    /// <summary>Relaunches the current program: its apphost, or <c>dotnet &lt;entry assembly&gt;</c>.</summary>
    public static ChildProcessLauncher ForCurrentProcess()
    {
        var processPath = Environment.ProcessPath ?? throw new InvalidOperationException("The current process has no path to relaunch.");
        var isDotnetHost = Path.GetFileNameWithoutExtension(processPath).Equals("dotnet", StringComparison.OrdinalIgnoreCase);
        var entry = Assembly.GetEntryAssembly()?.Location;
        return isDotnetHost && !string.IsNullOrEmpty(entry)
            ? new ChildProcessLauncher(processPath, [entry])
            : new ChildProcessLauncher(processPath, []);
    }

    /// <summary>The start info for a child running case <paramref name="caseIndex"/> of <paramref name="scenarioId"/>.</summary>
    public ProcessStartInfo StartInfo(string scenarioId, int caseIndex, double scale, bool full, string resultPath)
    {
        var info = new ProcessStartInfo(FileName)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in PrefixArguments)
        {
            info.ArgumentList.Add(argument);
        }

        info.ArgumentList.Add(ChildCommand);
        info.ArgumentList.Add("--scenario");
        info.ArgumentList.Add(scenarioId);
        info.ArgumentList.Add("--case");
        info.ArgumentList.Add(caseIndex.ToString(CultureInfo.InvariantCulture));
        info.ArgumentList.Add("--scale");
        info.ArgumentList.Add(scale.ToString("R", CultureInfo.InvariantCulture));
        if (full)
        {
            info.ArgumentList.Add("--full");
        }

        info.ArgumentList.Add("--result");
        info.ArgumentList.Add(resultPath);
        return info;
    }
}
