using System.Diagnostics;
using System.Globalization;

using Microsoft.Diagnostics.NETCore.Client;

namespace FanOut.Cli.Watch;

/// <summary>The process <c>fanout watch</c> attaches to, found from an id or a name, or the one line that says why none is.</summary>
internal sealed record WatchTarget(int ProcessId, string Name)
{
    /// <summary>Finds the process <paramref name="idOrName"/> names among the .NET processes that publish a diagnostics port.</summary>
    public static WatchTarget? Find(string idOrName, out string? error)
    {
        error = null;
        var published = DiagnosticsClient.GetPublishedProcesses().ToHashSet();
        if (int.TryParse(idOrName, NumberStyles.None, CultureInfo.InvariantCulture, out var id))
        {
            var name = NameOf(id);
            if (name is null)
            {
                error = $"no process with id {id} is running.";
                return null;
            }

            if (!published.Contains(id))
            {
                error = $"process {id} ({name}) has no .NET diagnostics port: it is not a .NET process, or it runs with DOTNET_EnableDiagnostics=0.";
                return null;
            }

            return new(id, name);
        }

        var dotnet = published.Select(p => new WatchTarget(p, NameOf(p) ?? string.Empty)).Where(t => t.Name.Length > 0).OrderBy(t => t.ProcessId).ToList();
        var named = dotnet.Where(t => string.Equals(t.Name, idOrName, StringComparison.OrdinalIgnoreCase)).ToList();
        switch (named.Count)
        {
            case 1:
                return named[0];
            case 0:
                var running = dotnet.Count == 0 ? "none" : string.Join(", ", dotnet.Select(t => t.ToString()));
                error = $"no .NET process named '{idOrName}' is running (running .NET processes: {running}).";
                return null;
            default:
                error = $"{named.Count} .NET processes are named '{idOrName}' ({string.Join(", ", named.Select(t => t.ProcessId))}): give the id of one.";
                return null;
        }
    }

    /// <summary>"1234 (name)".</summary>
    public override string ToString() => $"{ProcessId} ({Name})";

    /// <summary>The process's name, or null when no process has that id.</summary>
    private static string? NameOf(int id)
    {
        try
        {
            using var process = Process.GetProcessById(id);
            var name = process.ProcessName;

            // An app started with "dotnet app.dll" is named "dotnet": show the app's name, as dotnet-counters ps does.
            if (string.Equals(name, "dotnet", StringComparison.Ordinal) && AppDll(id) is { } app)
            {
                return app;
            }

            return name;
        }
        catch (ArgumentException)
        {
            return null;
        }
        catch (InvalidOperationException)
        {
            return null; // exited while we looked
        }
    }

    /// <summary>The .dll a <c>dotnet</c> host runs, from its command line (Linux: /proc/id/cmdline); null elsewhere or when none.</summary>
    private static string? AppDll(int id)
    {
        try
        {
            var path = $"/proc/{id.ToString(CultureInfo.InvariantCulture)}/cmdline";
            if (!File.Exists(path))
            {
                return null;
            }

            var dll = File.ReadAllText(path).Split('\0').Skip(1).FirstOrDefault(a => a.EndsWith(".dll", StringComparison.OrdinalIgnoreCase));
            return dll is null ? null : Path.GetFileNameWithoutExtension(dll);
        }
        catch (IOException)
        {
            return null;
        }
        catch (UnauthorizedAccessException)
        {
            return null;
        }
    }
}
