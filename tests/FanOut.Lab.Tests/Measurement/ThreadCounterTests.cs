using System.Text;

using FanOut.Lab.Measurement;

namespace FanOut.Lab.Tests.Measurement;

public sealed class ThreadCounterTests
{
    [Fact]
    public void Parse_CommandWithSpacesAndParens_ReadsField20()
    {
        var line = "3788 (my (odd) cmd) R 3779 3779 1051 0 -1 4194304 2853 6590 4 0 3 1 0 0 20 0 17 0 30157 3133440";
        Assert.Equal(17, ThreadCounter.Parse(Encoding.ASCII.GetBytes(line)));
    }

    [Fact]
    public void Parse_Truncated_ReturnsMinusOne()
    {
        Assert.Equal(-1, ThreadCounter.Parse(Encoding.ASCII.GetBytes("1 (x) R 2 3")));
    }

    [Fact]
    public void Read_ThisProcess_AgreesWithProcessThreads()
    {
        using var counter = new ThreadCounter();
        using var process = System.Diagnostics.Process.GetCurrentProcess();
        var fromProc = counter.Read();
        var fromProcess = process.Threads.Count;

        // Read a moment apart, so test-runner threads may come and go in between.
        Assert.InRange(fromProc, fromProcess - 3, fromProcess + 3);
    }
}
