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
        if (Environment.ProcessorCount == 1)
        {
            Assert.False(spin.SpinOnce()); // a single core never spins
            return;
        }

        var pattern = new List<int>(); // spins before each wait
        for (var wait = 0; wait < 9; wait++)
        {
            var spins = 0;
            while (spin.SpinOnce())
            {
                spins++;
            }

            pattern.Add(spins);
        }

        // A run of spins, then 1 wait skipped, a run, 2 skipped, a run, 4 skipped...
        Assert.Equal([Rounds, 0, Rounds, 0, 0, Rounds, 0, 0, 0], pattern);
    }

    [Fact]
    public void SpinOnce_NothingEverFound_SpinsBeforeFewWaits()
    {
        var spin = default(ReaderSpin);
        if (Environment.ProcessorCount == 1)
        {
            Assert.False(spin.SpinOnce()); // a single core never spins
            return;
        }

        var spinningWaits = 0;
        for (var wait = 0; wait < 10_000; wait++)
        {
            var spun = false;
            while (spin.SpinOnce())
            {
                spun = true;
            }

            spinningWaits += spun ? 1 : 0;
        }

        // Skips double up to 64 waits: past the first few, one wait in 65 spins.
        Assert.InRange(spinningWaits, 10_000 / 65, (10_000 / 65) + 8);
    }

    [Fact]
    public void Found_AfterASpin_StartsTheBackOffAgain()
    {
        var spin = default(ReaderSpin);
        if (Environment.ProcessorCount == 1)
        {
            Assert.False(spin.SpinOnce()); // a single core never spins
            return;
        }

        for (var wait = 0; wait < 100; wait++)
        {
            while (spin.SpinOnce())
            {
            }
        }

        // Backed off: the next waits skip spinning, until one spins.
        while (!spin.SpinOnce())
        {
        }

        spin.Found(); // that spin found a result

        // A miss now skips one wait, not 64.
        while (spin.SpinOnce())
        {
        }

        Assert.False(spin.SpinOnce());
        Assert.True(spin.SpinOnce());
    }
}
