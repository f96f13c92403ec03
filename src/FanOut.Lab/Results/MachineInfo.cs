using System.Runtime.InteropServices;

namespace FanOut.Lab.Results;

/// <summary>The machine the numbers came from: <c>machine</c> in results.json.</summary>
/// <param name="Os">Operating system description.</param>
/// <param name="ProcessorCount">Logical processors.</param>
/// <param name="DotnetVersion">Runtime description.</param>
/// <param name="Processor">CPU model name, where the OS tells it.</param>
public sealed record MachineInfo(string Os, int ProcessorCount, string DotnetVersion, string Processor)
{
    /// <summary>This machine.</summary>
    public static MachineInfo Current() => new(
        RuntimeInformation.OSDescription,
        Environment.ProcessorCount,
        RuntimeInformation.FrameworkDescription,
        ProcessorName());

    private static string ProcessorName()
    {
        try
        {
            if (OperatingSystem.IsLinux() && File.Exists("/proc/cpuinfo"))
            {
                var line = File.ReadLines("/proc/cpuinfo").FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal));
                if (line is not null)
                {
                    return line[(line.IndexOf(':', StringComparison.Ordinal) + 1)..].Trim();
                }
            }
        }
        catch (IOException)
        {
            // The model name is decoration; an unreadable cpuinfo must not stop a run.
        }

        return RuntimeInformation.ProcessArchitecture.ToString();
    }
}
