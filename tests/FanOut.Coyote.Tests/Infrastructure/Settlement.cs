namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>Counts how often each item of one call ran its body and settled, to check each settles exactly once.</summary>
public sealed class Settlement(string call, int items)
{
    private readonly int[] _started = new int[items];
    private readonly int[] _settled = new int[items];

    public int[] Items { get; } = Enumerable.Range(0, items).ToArray();

    public void Started(int item) => Interlocked.Increment(ref _started[item]);

    public void Settled(int item) => Interlocked.Increment(ref _settled[item]);

    public int SettledCount => _settled.Count(s => s > 0);

    /// <summary>Every item started and settled exactly once (a call that ran to completion).</summary>
    public void AssertEachOnce()
    {
        for (var i = 0; i < _started.Length; i++)
        {
            if (_started[i] != 1 || _settled[i] != 1)
            {
                throw new InvariantException($"{call}: item {i} started {_started[i]} and settled {_settled[i]} times (expected once)");
            }
        }
    }

    /// <summary>No item started twice, and every started item settled (a canceled or failed call).</summary>
    public void AssertAtMostOnce()
    {
        for (var i = 0; i < _started.Length; i++)
        {
            if (_started[i] > 1 || _settled[i] != _started[i])
            {
                throw new InvariantException($"{call}: item {i} started {_started[i]} and settled {_settled[i]} times (expected at most once, settled if started)");
            }
        }
    }

    public override string ToString() => $"{call}: {SettledCount}/{_settled.Length} settled";
}
