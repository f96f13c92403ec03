using System.Diagnostics;

using Microsoft.Win32.SafeHandles;

namespace FanOut.Lab.Measurement;

/// <summary>Reads the process's OS thread count (seed 002's column) cheaply enough to sample every millisecond.</summary>
/// <remarks>
/// On Linux it re-reads field 20 of <c>/proc/self/stat</c> into a reused buffer with pread, which
/// allocates nothing; <see cref="Process.Threads"/> would build a collection of every thread per sample.
/// Elsewhere it falls back to <see cref="Process"/>.
/// </remarks>
internal sealed class ThreadCounter : IDisposable
{
    private const int NumThreadsField = 20;
    private readonly SafeFileHandle? _stat;
    private readonly byte[] _buffer = new byte[1024];

    public ThreadCounter()
    {
        if (OperatingSystem.IsLinux() && File.Exists("/proc/self/stat"))
        {
            _stat = File.OpenHandle("/proc/self/stat");
        }
    }

    /// <summary>The number of OS threads in this process now.</summary>
    public int Read()
    {
        if (_stat is not null)
        {
            var length = RandomAccess.Read(_stat, _buffer, 0);
            var count = Parse(_buffer.AsSpan(0, length));
            if (count > 0)
            {
                return count;
            }
        }

        using var process = Process.GetCurrentProcess();
        return process.Threads.Count;
    }

    public void Dispose() => _stat?.Dispose();

    /// <summary>Parses num_threads out of a <c>/proc/[pid]/stat</c> line; -1 when it is not there.</summary>
    internal static int Parse(ReadOnlySpan<byte> stat)
    {
        // Field 2 is the command in parentheses and may hold spaces: count fields from the last ')'.
        var close = stat.LastIndexOf((byte)')');
        if (close < 0)
        {
            return -1;
        }

        var field = 2;
        var i = close + 1;
        while (i < stat.Length)
        {
            if (stat[i] == (byte)' ')
            {
                field++;
                i++;
                continue;
            }

            var start = i;
            while (i < stat.Length && stat[i] != (byte)' ')
            {
                i++;
            }

            if (field == NumThreadsField)
            {
                var value = 0;
                foreach (var b in stat[start..i])
                {
                    if (b is < (byte)'0' or > (byte)'9')
                    {
                        return -1;
                    }

                    value = (value * 10) + (b - '0');
                }

                return value;
            }
        }

        return -1;
    }
}
