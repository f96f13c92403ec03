using System.Collections.Concurrent;

namespace FanOut;

/// <summary>The partition keys named in metrics: the first <c>capacity</c> seen, by their text; every other key is <see cref="Other"/>.</summary>
internal sealed class PartitionMetricKeys(int capacity)
{
    internal const string Other = "other";

    private readonly ConcurrentDictionary<object, string> _names = new();

    internal string Name(object key)
    {
        if (_names.TryGetValue(key, out var name))
        {
            return name;
        }

        // Bounded: a race may name a few more than capacity at once, never more than capacity plus the racing threads.
        return _names.Count < capacity ? _names.GetOrAdd(key, static k => k.ToString() ?? string.Empty) : Other;
    }
}
