namespace FanOut.Cli.Watch;

/// <summary>
/// What <c>fanout watch</c> knows about the watched process: one row per limit in use, the last decisions, and which
/// limit the chart shows. Everything it holds is bounded: rows by the limits in use lately, history and log by count.
/// </summary>
internal sealed class WatchModel
{
    /// <summary>Points of limit and in-flight history kept per limit (one per interval).</summary>
    public const int HistoryLength = 60;

    /// <summary>Decisions kept for the log.</summary>
    public const int LogLength = 200;

    /// <summary>Intervals a row stays after its limit stopped being published (the process dropped it as idle, or it was collected).</summary>
    public const int IntervalsKeptAfterLastState = 30;

    private readonly Dictionary<long, LimitRow> _rows = [];
    private readonly Queue<LimitChangedEvent> _log = new();
    private long _selected;
    private int _interval;

    /// <summary>The rows, busiest first (most in flight, then most waiting), then by name.</summary>
    public IReadOnlyList<LimitRow> Rows =>
        [.. _rows.Values.OrderByDescending(r => r.InFlight).ThenByDescending(r => r.Waiting).ThenBy(r => r.Name, StringComparer.Ordinal).ThenBy(r => r.Id)];

    /// <summary>The newest decisions, oldest first.</summary>
    public IReadOnlyCollection<LimitChangedEvent> Log => _log;

    /// <summary>Intervals closed since the watch began.</summary>
    public int Intervals => _interval;

    /// <summary>The interval the process publishes at, in seconds (0 until the first one closed).</summary>
    public double IntervalSeconds { get; private set; }

    /// <summary>The limit the chart shows: the one chosen, else the busiest.</summary>
    public LimitRow? Selected => _rows.GetValueOrDefault(_selected) ?? Rows.FirstOrDefault();

    /// <summary>A name to select when its limit appears (<c>--limit</c>).</summary>
    public string? PreferredName { get; init; }

    public void Apply(WatchEvent e)
    {
        switch (e)
        {
            case LimitStateEvent state:
                ApplyState(state);
                break;
            case LimitChangedEvent change:
                ApplyChange(change);
                break;
            case IntervalClosedEvent closed:
                _interval++;
                IntervalSeconds = closed.IntervalSeconds;
                foreach (var stale in _rows.Values.Where(r => _interval - r.LastInterval > IntervalsKeptAfterLastState).Select(r => r.Id).ToList())
                {
                    _rows.Remove(stale);
                }

                break;
        }
    }

    /// <summary>Moves the chart's choice by <paramref name="step"/> rows (wrapping).</summary>
    public void Select(int step)
    {
        var rows = Rows;
        if (rows.Count == 0)
        {
            return;
        }

        var at = Math.Max(0, rows.ToList().FindIndex(r => r.Id == Selected?.Id));
        _selected = rows[((at + step) % rows.Count + rows.Count) % rows.Count].Id;
    }

    private void ApplyState(LimitStateEvent state)
    {
        if (!_rows.TryGetValue(state.LimitId, out var row))
        {
            row = new LimitRow(state.LimitId, state.Kind, state.Name);
            _rows[state.LimitId] = row;
            if (_selected == 0 && PreferredName is { } preferred && string.Equals(preferred, state.Name, StringComparison.Ordinal))
            {
                _selected = state.LimitId;
            }
        }

        row.Update(state, _interval);
    }

    private void ApplyChange(LimitChangedEvent change)
    {
        _log.Enqueue(change);
        while (_log.Count > LogLength)
        {
            _log.Dequeue();
        }

        if (_rows.TryGetValue(change.LimitId, out var row))
        {
            row.LastDecision = change;
        }
    }
}
