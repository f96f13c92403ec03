using System.Collections.Concurrent;
using System.Diagnostics.Metrics;

using FanOut.Diagnostics;

namespace FanOut;

/// <summary>
/// Limits per key (host, tenant, entity) under one global cap that is never exceeded: see
/// <see cref="ConcurrencyLimit.Partitioned{TKey}(int, Func{TKey, ConcurrencyLimit}, PartitionedLimitOptions?)"/>.
/// </summary>
/// <typeparam name="TKey">The partition key.</typeparam>
/// <remarks>
/// <para>
/// <see cref="ForKey"/> gives the limit of one key: pass it as <see cref="FanOutOptions.Limit"/>, to the HTTP handler, or take
/// its permits yourself. A permit of a key is its own limit's permit first, then one of the global pool: the global pool is
/// one atomic counter, so racing acquires on any number of keys never hold more than <see cref="ConcurrencyLimit.Current"/>
/// permits together (a key's permit waits, holding only its own key's room, while the global pool is full; global waiters are
/// served oldest first). Used directly as a limit, this instance is the global pool alone.
/// </para>
/// <para>
/// A key's limit lives while it is in use. Once more than <see cref="PartitionedLimitOptions.MaxIdleKeys"/> keys are known,
/// the idle ones (nothing in flight or waiting) are dropped, so memory follows the keys in flight, not every key ever seen;
/// an adaptive key limit dropped that way starts learning again next time.
/// </para>
/// </remarks>
public sealed class PartitionedConcurrencyLimit<TKey> : ConcurrencyLimit
    where TKey : notnull
{
    private readonly ConcurrentDictionary<TKey, PartitionEntry> _entries;
    private readonly Func<TKey, ConcurrencyLimit> _limitPerKey;
    private readonly PartitionedLimitOptions _options;
    private readonly int _globalLimit;
    private readonly PartitionMetricKeys _metricKeys;

    /// <summary>Set while one thread sweeps idle keys, so concurrent inserts do not all sweep.</summary>
    private int _sweeping;

    internal PartitionedConcurrencyLimit(int globalLimit, Func<TKey, ConcurrencyLimit> limitPerKey, PartitionedLimitOptions options)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(globalLimit, 1);
        ArgumentNullException.ThrowIfNull(limitPerKey);
        options.Validate();
        _globalLimit = globalLimit;
        _limitPerKey = limitPerKey;
        _options = options;
        _entries = new ConcurrentDictionary<TKey, PartitionEntry>();
        _metricKeys = new PartitionMetricKeys(options.MetricKeys);
        PartitionMetrics.Register(this, ObservePartitions);
    }

    /// <summary>The global cap: permits all keys hold together.</summary>
    public override int Current => _globalLimit;

    /// <inheritdoc/>
    /// <value><c>partitioned</c>.</value>
    public override string Kind => "partitioned";

    /// <summary>Keys whose limit is alive right now (in use, or idle and not yet dropped).</summary>
    public int KeyCount => _entries.Count;

    /// <summary>The limit of <paramref name="key"/>: its own limit under this instance's global cap.</summary>
    /// <param name="key">The partition key.</param>
    /// <returns>A limit to pass as <see cref="FanOutOptions.Limit"/> or to take permits from; cheap, and the same for equal keys.</returns>
    public ConcurrencyLimit ForKey(TKey key)
    {
        ArgumentNullException.ThrowIfNull(key);
        return new PartitionLimit<TKey>(this, key);
    }

    /// <summary>The limit of <paramref name="key"/> as created by the factory, creating it if needed (for inspection: its <see cref="ConcurrencyLimit.Current"/>, <see cref="ConcurrencyLimit.InFlight"/>).</summary>
    /// <param name="key">The partition key.</param>
    public ConcurrencyLimit KeyLimit(TKey key)
    {
        ArgumentNullException.ThrowIfNull(key);
        var entry = Pin(key);
        entry.Unpin();
        return entry.Limit;
    }

    /// <summary>The live entry of <paramref name="key"/>, if any, without pinning it.</summary>
    internal PartitionEntry? Peek(TKey key) => _entries.TryGetValue(key, out var entry) ? entry : null;

    /// <summary>Finds (or creates) the entry of <paramref name="key"/> and pins it, so it is not dropped while in use.</summary>
    internal PartitionEntry Pin(TKey key)
    {
        var spin = default(SpinWait);
        while (true)
        {
            if (!_entries.TryGetValue(key, out var entry))
            {
                // Made pinned: the sweep below (ours or another thread's) never drops the entry its maker is about to use,
                // however many keys are in use (with MaxIdleKeys reached, an unpinned new entry was dropped and made again forever).
                var created = PartitionEntry.Pinned(_limitPerKey(key) ?? throw new InvalidOperationException($"The limit factory returned null for key '{key}'; it must return a ConcurrencyLimit."));
                entry = _entries.GetOrAdd(key, created);
                if (ReferenceEquals(entry, created))
                {
                    _ = _metricKeys.Name(key); // keys are named in metrics in the order they are first used
                    if (_entries.Count > _options.MaxIdleKeys)
                    {
                        SweepIdle();
                    }

                    return created;
                }
            }

            if (entry.TryPin())
            {
                return entry;
            }

            // Dropped between the lookup and the pin: its removal from the map follows at once.
            spin.SpinOnce();
        }
    }

    /// <summary>Takes a permit of the global pool (a key's permit is already held).</summary>
    internal bool TryAcquireGlobal() => TryAcquireCore();

    /// <summary>Waits for a permit of the global pool.</summary>
    internal Task<bool> WaitGlobalAsync(CancellationToken cancellationToken) => WaitAsync(cancellationToken); // counted: keys' holders then give back

    /// <summary>Gives a permit back to the global pool.</summary>
    internal void ReleaseGlobal() => ReleaseCore();

    /// <summary>The tag value for a key's metrics: the key itself for the first <see cref="PartitionedLimitOptions.MetricKeys"/> keys seen, then <c>other</c>.</summary>
    internal string MetricKey(TKey key) => _metricKeys.Name(key);

    private void SweepIdle()
    {
        if (Interlocked.Exchange(ref _sweeping, 1) != 0)
        {
            return;
        }

        try
        {
            foreach (var pair in _entries)
            {
                if (pair.Value.TryDrop())
                {
                    _entries.TryRemove(pair);
                }
            }
        }
        finally
        {
            Volatile.Write(ref _sweeping, 0);
        }
    }

    /// <summary>Items in flight per key: the first <see cref="PartitionedLimitOptions.MetricKeys"/> keys by name, the rest summed as <c>other</c>.</summary>
    private void ObservePartitions(List<Measurement<int>> measurements)
    {
        var other = 0;
        var anyOther = false;
        foreach (var pair in _entries)
        {
            var name = MetricKey(pair.Key);
            if (ReferenceEquals(name, PartitionMetricKeys.Other))
            {
                other += pair.Value.Limit.InFlight;
                anyOther = true;
                continue;
            }

            measurements.Add(new Measurement<int>(pair.Value.Limit.InFlight, new KeyValuePair<string, object?>(FanOutInstruments.PartitionTag, name)));
        }

        if (anyOther)
        {
            measurements.Add(new Measurement<int>(other, new KeyValuePair<string, object?>(FanOutInstruments.PartitionTag, PartitionMetricKeys.Other)));
        }
    }
}
