namespace FanOut.Tests.Infrastructure;

/// <summary>
/// A clock that moves only when told. Timestamps are in ticks of 100 ns. Timers fire during <see cref="Advance"/>, each
/// at its due time (the clock reads that time while its callback runs), in due order, on the advancing thread.
/// </summary>
public sealed class ManualTimeProvider : TimeProvider
{
    private readonly Lock _lock = new();
    private readonly List<ManualTimer> _timers = [];
    private long _ticks = TimeSpan.TicksPerDay;

    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    public TimeSpan Now => TimeSpan.FromTicks(Volatile.Read(ref _ticks));

    /// <summary>When the next timer fires; <see langword="null"/> when none is scheduled.</summary>
    public TimeSpan? NextTimerDue
    {
        get
        {
            lock (_lock)
            {
                return _timers.Count == 0 ? null : TimeSpan.FromTicks(_timers.Min(t => t.DueTicks));
            }
        }
    }

    /// <summary>Timers created and not disposed.</summary>
    public int ActiveTimers
    {
        get
        {
            lock (_lock)
            {
                return _timers.Count;
            }
        }
    }

    public override long GetTimestamp() => Volatile.Read(ref _ticks);

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = new ManualTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    public void Advance(TimeSpan by) => SetTo(Now + by);

    public void SetTo(TimeSpan now)
    {
        Assert.True(now.Ticks >= Volatile.Read(ref _ticks), "Time never goes back.");
        while (true)
        {
            ManualTimer? due;
            lock (_lock)
            {
                due = _timers.Where(t => t.DueTicks <= now.Ticks).MinBy(t => t.DueTicks);
                if (due is null)
                {
                    Volatile.Write(ref _ticks, now.Ticks);
                    return;
                }

                Volatile.Write(ref _ticks, Math.Max(_ticks, due.DueTicks));
                if (due.PeriodTicks > 0)
                {
                    due.DueTicks += due.PeriodTicks;
                }
                else
                {
                    _timers.Remove(due);
                }
            }

            due.Fire();
        }
    }

    private void Schedule(ManualTimer timer, TimeSpan dueTime, TimeSpan period)
    {
        lock (_lock)
        {
            _timers.Remove(timer);
            if (dueTime == Timeout.InfiniteTimeSpan)
            {
                return;
            }

            timer.DueTicks = _ticks + dueTime.Ticks;
            timer.PeriodTicks = period == Timeout.InfiniteTimeSpan ? 0 : period.Ticks;
            _timers.Add(timer);
        }
    }

    private void Remove(ManualTimer timer)
    {
        lock (_lock)
        {
            _timers.Remove(timer);
        }
    }

    private sealed class ManualTimer(ManualTimeProvider clock, TimerCallback callback, object? state) : ITimer
    {
        public long DueTicks { get; set; }

        public long PeriodTicks { get; set; }

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            clock.Schedule(this, dueTime, period);
            return true;
        }

        public void Fire() => callback(state);

        public void Dispose() => clock.Remove(this);

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }
    }
}
