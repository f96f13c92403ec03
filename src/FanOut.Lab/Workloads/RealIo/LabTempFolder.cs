namespace FanOut.Lab.Workloads.RealIo;

/// <summary>A temporary folder a real-I/O case creates its files or database in, deleted when disposed.</summary>
/// <remarks>
/// It is made under <see cref="RootVariable"/> when set: <see cref="Running.ChildProcessCaseRunner"/> sets it to a folder
/// of its own and deletes that folder after the child exits, however it exits. That covers what the child's own
/// clean-up cannot: Ctrl+C makes the parent kill the child's process tree, and a killed process runs no finally.
/// </remarks>
public sealed class LabTempFolder : IDisposable
{
    /// <summary>The environment variable naming the folder to create case folders in.</summary>
    public const string RootVariable = "FANOUT_CASE_TEMP";

    private LabTempFolder(string path) => Path = path;

    /// <summary>The folder.</summary>
    public string Path { get; }

    /// <summary>Creates <c>fanout-&lt;purpose&gt;-&lt;guid&gt;</c> under the case root or the system temp folder.</summary>
    public static LabTempFolder Create(string purpose)
    {
        var root = Environment.GetEnvironmentVariable(RootVariable);
        if (string.IsNullOrWhiteSpace(root))
        {
            root = System.IO.Path.GetTempPath();
        }

        var path = System.IO.Path.Combine(root, $"fanout-{purpose}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(path);
        return new LabTempFolder(path);
    }

    /// <summary>Deletes <paramref name="path"/> and everything in it; a folder already gone is fine.</summary>
    public static void Delete(string path)
    {
        try
        {
            if (Directory.Exists(path))
            {
                Directory.Delete(path, recursive: true);
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Best effort: a leftover temp folder must not turn a finished case into a failed one.
        }
    }

    /// <summary>Deletes the folder.</summary>
    public void Dispose() => Delete(Path);
}
