namespace FanOut.Limits.Adaptive;

/// <summary>
/// Spreads slow start's growth over the round trip, as Linux paces TCP's slow start (at twice the window per round trip):
/// the law may grow the limit by one per answer at once, but the permits the pool grants follow it at no more than
/// <see cref="AdaptiveLimitOptions.SlowStartPace"/> x the limit per baseline latency (by default 4: answers that arrive
/// spread over their round trip are never held back, they come at half that rate); a round whose answers arrive together (a downstream with a fixed latency
/// answers a round of 64 within a millisecond) no longer sends its whole growth before the first "no" can come back: over
/// HTTP against a hard cap of 64 that burst was 64 calls answered 429 at once. Cuts are never paced. Reads no clock: the
/// owning limit passes the time, under its lock, and arms a timer for <see cref="Follow"/>'s due time.
/// </summary>
internal sealed class SlowStartPacer
{
    /// <summary>The pace, in limits per baseline latency (<see cref="AdaptiveLimitOptions.SlowStartPace"/>).</summary>
    private readonly double _pace;

    /// <summary>Permits granted at once when growth outruns the grant afresh, beyond the first one.</summary>
    internal const int Burst = 1;

    /// <summary>When the next paced permit is due (GCRA's theoretical arrival time), in timestamp ticks.</summary>
    private double _nextRelease = double.MinValue;

    /// <summary>
    /// The most lateness of the pace's timer (or of the next answer) whose permits are granted at once: a timer fires up to
    /// a millisecond late routinely; beyond that the machine stalled, and what the schedule would have granted meanwhile is
    /// not owed (granted in one lump it is the burst the pace exists to prevent: 71 -> 93 at once on a 5 ms late timer).
    /// </summary>
    internal static readonly TimeSpan MaxCatchUp = TimeSpan.FromMilliseconds(1);

    /// <summary><see cref="MaxCatchUp"/> in timestamp ticks.</summary>
    private readonly double _maxCatchUp;

    /// <summary>True while the grant is behind the law's limit: the schedule runs on, and a late timer grants what it owes.</summary>
    private bool _behind;

    /// <summary>Creates the pace at <paramref name="initial"/> granted, <paramref name="pace"/> limits per baseline latency, on a clock of <paramref name="timestampFrequency"/> ticks a second.</summary>
    public SlowStartPacer(int initial, double pace, long timestampFrequency)
    {
        Granted = initial;
        _pace = pace;
        _maxCatchUp = MaxCatchUp.TotalSeconds * timestampFrequency;
    }

    /// <summary>The limit the pool grants: the law's, or below it while a rise is being paced.</summary>
    public int Granted { get; private set; }

    /// <summary>
    /// Moves <see cref="Granted"/> toward the law's <paramref name="target"/> at <paramref name="now"/>: at once when it falls
    /// or pacing is off (after slow start, where growth is at most a quarter per window; or before a baseline exists),
    /// else by the permits the pace has scheduled by now: one permit each round trip / (the pace x the grant), starting
    /// with <see cref="Burst"/> + 1 at once when the grant was not behind, and owing no more than <see cref="MaxCatchUp"/>
    /// of lateness when it was.
    /// </summary>
    /// <param name="target">The law's limit.</param>
    /// <param name="pace">True in slow start.</param>
    /// <param name="roundTrip">The baseline latency, in timestamp ticks (0: not measured yet).</param>
    /// <param name="now">The time, in timestamp ticks.</param>
    /// <param name="dueIn">Ticks until the next paced permit, 0 when none is pending.</param>
    /// <returns><see cref="Granted"/>.</returns>
    public int Follow(int target, bool pace, double roundTrip, long now, out long dueIn)
    {
        dueIn = 0;
        if (target <= Granted || !pace || roundTrip <= 0)
        {
            Granted = target;
            _behind = false;
            return target;
        }

        _nextRelease = Math.Max(_nextRelease, now - (_behind ? Math.Max(_maxCatchUp, Interval(roundTrip)) : Burst * Interval(roundTrip)));

        while (Granted < target && _nextRelease <= now)
        {
            Granted++;
            _nextRelease += Interval(roundTrip);
        }

        _behind = Granted < target;
        if (_behind)
        {
            dueIn = Math.Max(1, (long)Math.Ceiling(_nextRelease - now));
        }

        return Granted;
    }

    /// <summary>Ticks between two paced permits at the grant now.</summary>
    private double Interval(double roundTrip) => roundTrip / (_pace * Granted);
}
