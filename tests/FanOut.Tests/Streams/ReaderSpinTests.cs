using FanOut.Execution;

namespace FanOut.Tests.Streams;

/// <summary>The stream reader's spin before a wait: short, and backing off where it finds nothing.</summary>
public sealed class ReaderSpinTests
{
    /// <summary>Spin rounds before a wait (ReaderSpin's).</summary>
    private const int Rounds = 5;

    [Fact]
    public void SpinOnce_NothingEverFound_SpinsOneRunThenSkipsTwiceAsManyWaitsEachTime()
    {
        var spin = default(ReaderSpin);
        if (SingleCoreNeverSpins(ref spin))
        {
            return;
        }

        var pattern = new List<int>(); // spins before each wait
        for (var wait = 0; wait < 9; wait++)
        {
            pattern.Add(SpinsBeforeWait(ref spin));
        }

        // A run of spins, then 1 wait skipped, a run, 2 skipped, a run, 4 skipped...
        Assert.Equal([Rounds, 0, Rounds, 0, 0, Rounds, 0, 0, 0], pattern);
    }

    [Fact]
    public void SpinOnce_NothingEverFound_SpinsBeforeFewWaits()
    {
        var spin = default(ReaderSpin);
        if (SingleCoreNeverSpins(ref spin))
        {
            return;
        }

        var spinningWaits = 0;
        for (var wait = 0; wait < 10_000; wait++)
        {
            spinningWaits += SpinsBeforeWait(ref spin) > 0 ? 1 : 0;
        }

        // Skips double up to 64 waits: past the first few, one wait in 65 spins.
        Assert.InRange(spinningWaits, 10_000 / 65, (10_000 / 65) + 8);
    }

    [Fact]
    public void Found_AfterASpin_StartsTheBackOffAgain()
    {
        var spin = default(ReaderSpin);
        if (SingleCoreNeverSpins(ref spin))
        {
            return;
        }

        for (var wait = 0; wait < 100; wait++)
        {
            SpinsBeforeWait(ref spin);
        }

        // Backed off: the next waits skip spinning, until one spins.
        while (!spin.SpinOnce())
        {
        }

        spin.Found(); // that spin found a result

        // A miss now skips one wait, not 64.
        SpinsBeforeWait(ref spin);

        Assert.False(spin.SpinOnce());
        Assert.True(spin.SpinOnce());
    }

    /// <summary>Spins until the reader would wait (nothing is ever found); returns the spins.</summary>
    private static int SpinsBeforeWait(ref ReaderSpin spin)
    {
        var spins = 0;
        while (spin.SpinOnce())
        {
            spins++;
        }

        return spins;
    }

    /// <summary>On a single core: asserts the reader never spins, and returns true (the test has nothing more to check).</summary>
    private static bool SingleCoreNeverSpins(ref ReaderSpin spin)
    {
        if (Environment.ProcessorCount > 1)
        {
            return false;
        }

        Assert.False(spin.SpinOnce());
        return true;
    }
}
