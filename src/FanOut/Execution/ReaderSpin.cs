namespace FanOut.Execution;

/// <summary>
/// A stream reader's brief spin before it waits for the next result, backing off when spinning finds nothing.
/// </summary>
/// <remarks>
/// Each wait of a reader that found the stream empty costs a thread-pool hand-off when the next result comes. Where results
/// come faster than that hand-off (short bodies on free cores), a spin of well under a microsecond usually finds the next
/// one and saves it. Where spinning finds nothing (slow bodies, or cores busy elsewhere, where a spin would take the
/// workers' time) the reader skips spinning for twice as many waits each time, up to <see cref="MaxSkippedWaits"/>, so
/// spinning costs little where it does not pay. Single-core machines never spin. Measurements: docs/library.md.
/// </remarks>
internal struct ReaderSpin
{
    /// <summary>Spin rounds before a wait: 1, 2, 4, 8, 16 pause instructions (about 31 in all).</summary>
    private const int Rounds = 5;

    /// <summary>The most waits skipped without a spin after spins that found nothing.</summary>
    private const int MaxSkippedWaits = 64;

    private int _round;
    private int _skip;
    private int _skipAfterMiss;

    /// <summary>Called when the reader found a result: a spin that led to it paid, so the next miss starts backing off from one wait.</summary>
    public void Found()
    {
        if (_round > 0)
        {
            _skipAfterMiss = 0;
        }

        _round = 0;
    }

    /// <summary>Called when the reader found nothing: spins once and returns true (try again), or returns false (wait).</summary>
    public bool SpinOnce()
    {
        if (_skip > 0)
        {
            _skip--;
            return false;
        }

        if (_round == Rounds || Environment.ProcessorCount == 1)
        {
            // Spun for nothing: wait now, and skip spinning for the next waits.
            _round = 0;
            _skipAfterMiss = Math.Min(Math.Max(1, 2 * _skipAfterMiss), MaxSkippedWaits);
            _skip = _skipAfterMiss;
            return false;
        }

        Thread.SpinWait(1 << _round++);
        return true;
    }
}
