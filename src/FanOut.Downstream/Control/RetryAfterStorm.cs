namespace FanOut.Downstream.Control;

/// <summary>A Retry-After storm: until it ends, every work request is answered 429 with the seconds left in <c>Retry-After</c>.</summary>
/// <remarks>The end is one timestamp of the server's <see cref="TimeProvider"/>, written and read atomically; a request checks it
/// before anything else, so a storm turns away even requests that would have found a free slot.</remarks>
internal sealed class RetryAfterStorm(TimeProvider time)
{
    /// <summary>The storm's end, in <see cref="TimeProvider.GetTimestamp"/> units; 0 when none was started.</summary>
    private long _endsAt;

    /// <summary>Starts a storm of <paramref name="duration"/> from now, replacing one under way; <see cref="TimeSpan.Zero"/> ends it.</summary>
    public void Start(TimeSpan duration)
        => Volatile.Write(ref _endsAt, duration <= TimeSpan.Zero ? 0 : time.GetTimestamp() + (long)(duration.TotalSeconds * time.TimestampFrequency));

    /// <summary>The time left of the storm under way, or <see cref="TimeSpan.Zero"/> when none is.</summary>
    public TimeSpan Left
    {
        get
        {
            var endsAt = Volatile.Read(ref _endsAt);
            if (endsAt == 0)
            {
                return TimeSpan.Zero;
            }

            var now = time.GetTimestamp();
            return now >= endsAt ? TimeSpan.Zero : TimeSpan.FromSeconds((endsAt - now) / (double)time.TimestampFrequency);
        }
    }
}
