namespace FanOut.Lab.Workloads;

/// <summary>Per-item waiting times: one fixed value, or a seeded uniform draw per item.</summary>
/// <remarks>Drawn once up front so every strategy in a scenario sees the same delays in the same order.</remarks>
public sealed class DelaySchedule
{
    private readonly int[] _ms;

    private readonly Dictionary<string, object> _parameters;

    private DelaySchedule(int[] ms, string text, Dictionary<string, object> parameters)
    {
        _ms = ms;
        Text = text;
        _parameters = parameters;
    }

    /// <summary>The schedule as people read it: <c>20ms</c> or <c>10-50ms seed 42</c>.</summary>
    public string Text { get; }

    /// <summary>The waits by item index.</summary>
    public IReadOnlyList<int> Milliseconds => _ms;

    /// <summary>The wait of item <paramref name="index"/>.</summary>
    public int this[int index] => _ms[index];

    /// <summary>Every item waits <paramref name="ms"/>.</summary>
    public static DelaySchedule Fixed(int ms, int itemCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(ms);
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        return new DelaySchedule(Enumerable.Repeat(ms, itemCount).ToArray(), $"{ms}ms", new() { ["delayMs"] = ms });
    }

    /// <summary>Item waits drawn uniformly from [<paramref name="minMs"/>, <paramref name="maxMs"/>) with a fixed seed, as seed 002 does with Random.Next(10, 50).</summary>
    public static DelaySchedule Uniform(int minMs, int maxMs, int seed, int itemCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(minMs);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxMs, minMs + 1);
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        var random = new Random(seed);
        var ms = new int[itemCount];
        for (var i = 0; i < ms.Length; i++)
        {
            ms[i] = random.Next(minMs, maxMs);
        }

        return new DelaySchedule(ms, $"{minMs}-{maxMs}ms seed {seed}", new() { ["minDelayMs"] = minMs, ["maxDelayMs"] = maxMs, ["seed"] = seed });
    }

    /// <summary>Copies the schedule's parameters (delayMs, or minDelayMs/maxDelayMs/seed) into <paramref name="parameters"/>.</summary>
    public void Describe(IDictionary<string, object> parameters)
    {
        foreach (var (key, value) in _parameters)
        {
            parameters[key] = value;
        }
    }
}
