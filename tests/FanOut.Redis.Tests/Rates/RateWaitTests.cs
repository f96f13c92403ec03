using System.Threading.Channels;

using FanOut.Redis.Rates;

namespace FanOut.Redis.Tests.Rates;

/// <summary>A booked permit's wait is never cut short by a timer that fires early (a coarse tick fired Task.Delay up to 3.5 ms early here).</summary>
public sealed class RateWaitTests
{
    private static readonly TimeSpan s_guard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task AtLeastAsync_TimerFiresEarly_WaitsTheRemainderByTheTimestamp()
    {
        var time = new EarlyFiringTimeProvider();
        var wait = RateWait.AtLeastAsync(TimeSpan.FromMilliseconds(200), time, CancellationToken.None);

        var first = await time.Timers.ReadAsync().AsTask().WaitAsync(s_guard);
        Assert.Equal(TimeSpan.FromMilliseconds(200), first.Due);
        time.Fire(first, at: TimeSpan.FromMilliseconds(196.5));

        var second = await time.Timers.ReadAsync().AsTask().WaitAsync(s_guard);
        Assert.False(wait.IsCompleted, "The wait ended 3.5 ms before it was due.");
        Assert.Equal(TimeSpan.FromMilliseconds(4), second.Due); // 3.5 ms, in the timer's whole milliseconds
        time.Fire(second, at: TimeSpan.FromMilliseconds(200.5));

        await wait.WaitAsync(s_guard);
    }

    [Fact]
    public async Task AtLeastAsync_Canceled_EndsWithoutASecondTimer()
    {
        var time = new EarlyFiringTimeProvider();
        using var cancel = new CancellationTokenSource();
        var wait = RateWait.AtLeastAsync(TimeSpan.FromMilliseconds(200), time, cancel.Token);
        _ = await time.Timers.ReadAsync().AsTask().WaitAsync(s_guard);

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => wait.WaitAsync(s_guard));
        Assert.False(time.Timers.TryRead(out _));
    }

    /// <summary>A clock the test sets, whose timers fire only when the test says (early, if it likes).</summary>
    private sealed class EarlyFiringTimeProvider : TimeProvider
    {
        private readonly Channel<ScheduledTimer> _timers = Channel.CreateUnbounded<ScheduledTimer>();
        private long _now;

        public ChannelReader<ScheduledTimer> Timers => _timers.Reader;

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp() => Interlocked.Read(ref _now);

        public void Fire(ScheduledTimer timer, TimeSpan at)
        {
            Interlocked.Exchange(ref _now, at.Ticks);
            timer.Callback(timer.State);
        }

        public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
        {
            var timer = new ScheduledTimer(callback, state, dueTime);
            _timers.Writer.TryWrite(timer);
            return timer;
        }
    }

    private sealed record ScheduledTimer(TimerCallback Callback, object? State, TimeSpan Due) : ITimer
    {
        public bool Change(TimeSpan dueTime, TimeSpan period) => true;

        public void Dispose()
        {
        }

        public ValueTask DisposeAsync() => ValueTask.CompletedTask;
    }
}
