namespace FanOut.Redis.Rates;

/// <summary>Waits for a booked permit: never less than the wait, by the clock's timestamp rather than the timer's.</summary>
/// <remarks>
/// A timer counts a coarse tick (4 ms on this Linux kernel): Task.Delay fired up to 3.5 ms early in 177 of 480 delays of
/// 20-50 ms, which let a permit out before its slot on the server's clock. The remainder is waited again until the
/// timestamp says the wait is over; with a fake clock the first delay is exact and there is no second.
/// </remarks>
internal static class RateWait
{
    public static async Task AtLeastAsync(TimeSpan wait, TimeProvider time, CancellationToken cancellationToken)
    {
        var start = time.GetTimestamp();
        var remaining = wait;
        while (remaining > TimeSpan.Zero)
        {
            // Timers take whole milliseconds (a fraction is cut off): rounded up, a remainder under one is no busy loop.
            await Task.Delay(TimeSpan.FromMilliseconds(Math.Ceiling(remaining.TotalMilliseconds)), time, cancellationToken).ConfigureAwait(false);
            remaining = wait - time.GetElapsedTime(start);
        }
    }
}
