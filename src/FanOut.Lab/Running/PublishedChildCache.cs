using System.Diagnostics;
using System.Security.Cryptography;
using System.Text;

namespace FanOut.Lab.Running;

/// <summary>Publishes the child (src/FanOut.Lab.Child) as a <see cref="RuntimeVariant"/> on demand and keeps it, keyed by a hash of
/// its build inputs, under <c>~/.cache/fanout/children</c> (or <c>$XDG_CACHE_HOME/fanout/children</c>).</summary>
/// <remarks>A publish goes to a temporary folder that is renamed into place only when it succeeded, with its own
/// artifacts path, so a killed publish leaves nothing half-made and the source tree's bin/obj are not touched.</remarks>
/// <param name="sourceRoot">The repository root (the folder of FanOut.slnx).</param>
/// <param name="cacheRoot">Where published children are kept.</param>
public sealed class PublishedChildCache(string sourceRoot, string cacheRoot)
{
    /// <summary>The child project, relative to the source root.</summary>
    public const string ChildProject = "src/FanOut.Lab.Child/FanOut.Lab.Child.csproj";

    /// <summary>The child's executable name.</summary>
    public const string ChildExecutable = "FanOut.Lab.Child";

    /// <summary>The folders whose sources make up the child; anything under them (but bin/obj) changes the hash.</summary>
    private static readonly string[] s_inputFolders = ["src/FanOut", "src/FanOut.Lab", "src/FanOut.Lab.Child", "src/FanOut.Downstream"];

    private static readonly string[] s_inputFiles = ["Directory.Build.props", "Directory.Packages.props", "global.json"];

    private static readonly string[] s_inputExtensions = [".cs", ".csproj", ".props", ".targets", ".json"];

    /// <summary>The last lines of a failed publish kept for the message.</summary>
    private const int ErrorLines = 6;

    /// <summary>The default cache root: <c>$XDG_CACHE_HOME/fanout/children</c> or <c>~/.cache/fanout/children</c>.</summary>
    public static string DefaultCacheRoot()
    {
        var xdg = Environment.GetEnvironmentVariable("XDG_CACHE_HOME");
        var root = string.IsNullOrEmpty(xdg) ? Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".cache") : xdg;
        return Path.Combine(root, "fanout", "children");
    }

    /// <summary>The repository root above <paramref name="start"/> (a folder holding FanOut.slnx and the child project), or null.</summary>
    public static string? FindSourceRoot(string start)
    {
        for (var dir = new DirectoryInfo(start); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "FanOut.slnx")) && File.Exists(Path.Combine(dir.FullName, ChildProject)))
            {
                return dir.FullName;
            }
        }

        return null;
    }

    /// <summary>A hash of every build input of the child, and of the variant: the cache key.</summary>
    public string InputHash(RuntimeVariant variant)
    {
        ArgumentNullException.ThrowIfNull(variant);
        var files = s_inputFolders
            .Select(f => Path.Combine(sourceRoot, f))
            .Where(Directory.Exists)
            .SelectMany(f => Directory.EnumerateFiles(f, "*", SearchOption.AllDirectories))
            .Where(f => s_inputExtensions.Contains(Path.GetExtension(f), StringComparer.OrdinalIgnoreCase) && !IsBuildOutput(f))
            .Concat(s_inputFiles.Select(f => Path.Combine(sourceRoot, f)).Where(File.Exists))
            .Select(f => Path.GetRelativePath(sourceRoot, f).Replace('\\', '/'))
            .Order(StringComparer.Ordinal);
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        hash.AppendData(Encoding.UTF8.GetBytes(string.Join(' ', variant.PublishArguments) + "\n" + System.Runtime.InteropServices.RuntimeInformation.FrameworkDescription + "\n"));
        foreach (var file in files)
        {
            hash.AppendData(Encoding.UTF8.GetBytes(file + "\n"));
            hash.AppendData(File.ReadAllBytes(Path.Combine(sourceRoot, file)));
        }

        return Convert.ToHexStringLower(hash.GetHashAndReset())[..16];
    }

    /// <summary>The folder the variant's child is (or will be) kept in.</summary>
    public string FolderFor(RuntimeVariant variant) => Path.Combine(cacheRoot, $"{variant.Key}-{InputHash(variant)}");

    /// <summary>The published child's executable, publishing it first when the cache has none for these inputs; null with
    /// <paramref name="error"/> saying what failed (and what is missing, when the toolchain is) otherwise.</summary>
    /// <param name="variant">The build.</param>
    /// <param name="log">Told, in one line, that a publish starts (it takes a minute or more).</param>
    /// <param name="error">Why there is no child.</param>
    /// <param name="cancellationToken">Stops (kills) the publish.</param>
    public string? Ensure(RuntimeVariant variant, Action<string> log, out string? error, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(variant);
        ArgumentNullException.ThrowIfNull(log);
        error = null;
        var folder = FolderFor(variant);
        var executable = Path.Combine(folder, ChildExecutable);
        if (File.Exists(executable))
        {
            return executable;
        }

        Directory.CreateDirectory(cacheRoot);
        var staging = Path.Combine(cacheRoot, $"staging-{Guid.NewGuid():N}");
        try
        {
            log($"publishing the {variant.Label} child into {folder} (once per change of the sources; about a minute)...");
            var (exitCode, output) = RunPublish(variant, staging, cancellationToken);
            if (exitCode != 0 || !File.Exists(Path.Combine(staging, "out", ChildExecutable)))
            {
                error = $"the {variant.Label} publish failed (dotnet publish exited with {exitCode}): {Explain(output)}";
                return null;
            }

            try
            {
                Directory.Move(Path.Combine(staging, "out"), folder);
            }
            catch (IOException) when (File.Exists(executable))
            {
                // Another run published the same inputs at the same time: theirs is as good.
            }

            return executable;
        }
        finally
        {
            if (Directory.Exists(staging))
            {
                Directory.Delete(staging, recursive: true);
            }
        }
    }

    /// <summary>What a failed publish said: the toolchain pieces it misses, else its last error lines.</summary>
    public static string Explain(string output)
    {
        ArgumentNullException.ThrowIfNull(output);
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        var missing = new List<string>();
        if (lines.Any(l => l.Contains("linker", StringComparison.OrdinalIgnoreCase) && l.Contains("not found", StringComparison.OrdinalIgnoreCase)))
        {
            missing.Add("a C toolchain (clang, or gcc): apt-get install clang");
        }

        if (lines.Any(l => l.Contains("-lz", StringComparison.Ordinal) || l.Contains("zlib", StringComparison.OrdinalIgnoreCase)))
        {
            missing.Add("zlib's development files: apt-get install zlib1g-dev");
        }

        if (lines.Any(l => l.Contains("NU1101", StringComparison.Ordinal) || l.Contains("NU1102", StringComparison.Ordinal)))
        {
            missing.Add("a package the feed does not have: " + string.Join("; ", lines.Where(l => l.Contains("NU110", StringComparison.Ordinal)).Take(2)));
        }

        if (missing.Count > 0)
        {
            return "missing " + string.Join(", and ", missing) + ".";
        }

        var errors = lines.Where(l => l.Contains("error", StringComparison.OrdinalIgnoreCase)).Distinct().Take(ErrorLines).ToArray();
        return string.Join(" | ", errors.Length > 0 ? errors : lines.TakeLast(ErrorLines));
    }

    private static bool IsBuildOutput(string path) =>
        path.Split(Path.DirectorySeparatorChar).Any(part => part is "bin" or "obj");

    private (int ExitCode, string Output) RunPublish(RuntimeVariant variant, string staging, CancellationToken cancellationToken)
    {
        var info = new ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host : "dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = sourceRoot,
        };
        string[] arguments =
        [
            "publish", Path.Combine(sourceRoot, ChildProject), "-c", "Release", "-r", System.Runtime.InteropServices.RuntimeInformation.RuntimeIdentifier,
            "-o", Path.Combine(staging, "out"), "--artifacts-path", Path.Combine(staging, "artifacts"), "-nologo", .. variant.PublishArguments,
        ];
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        using var process = new Process { StartInfo = info };
        var output = new StringBuilder();
        process.OutputDataReceived += (_, e) => Append(output, e.Data);
        process.ErrorDataReceived += (_, e) => Append(output, e.Data);
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using (cancellationToken.Register(() => process.Kill(entireProcessTree: true)))
        {
            process.WaitForExit();
        }

        cancellationToken.ThrowIfCancellationRequested();
        lock (output)
        {
            return (process.ExitCode, output.ToString());
        }
    }

    private static void Append(StringBuilder output, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (output)
        {
            output.AppendLine(line);
        }
    }
}
