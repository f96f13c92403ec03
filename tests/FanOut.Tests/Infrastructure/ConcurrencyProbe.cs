namespace FanOut.Tests.Infrastructure;

/// <summary>Counts bodies running at once and remembers the most ever seen.</summary>
public sealed class ConcurrencyProbe
{
    private int _current;
    private int _max;
    private int _started;

    public int Current => Volatile.Read(ref _current);

    public int Max => Volatile.Read(ref _max);

    public int Started => Volatile.Read(ref _started);

    public void Enter()
    {
        Interlocked.Increment(ref _started);
        InterlockedMax.Raise(ref _max, Interlocked.Increment(ref _current));
    }

    public void Exit() => Interlocked.Decrement(ref _current);
}
