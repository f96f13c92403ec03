namespace FanOut.Cli.Watch;

/// <summary>One limit as the watch shows it.</summary>
internal sealed class LimitRow(long id, string kind, string name)
{
    private readonly Queue<(int Limit, int InFlight)> _history = new();
    private LimitStateEvent? _last;

    public long Id { get; } = id;

    public string Kind { get; } = kind;

    public string Name { get; } = name;

    public int Limit { get; private set; }

    public int InFlight { get; private set; }

    public int Waiting { get; private set; }

    /// <summary>Mean latency of the interval's answers, ms; null when none answered or the limit does not time its items.</summary>
    public double? LatencyMs { get; private set; }

    /// <summary>The uncontended latency an adaptive limit compares with, ms; null until measured.</summary>
    public double? BaselineMs { get; private set; }

    public double OverloadsPerSecond { get; private set; }

    public double PausesPerSecond { get; private set; }

    public long Changes { get; private set; }

    /// <summary>The interval this limit was last published in.</summary>
    public int LastInterval { get; private set; }

    public LimitChangedEvent? LastDecision { get; set; }

    /// <summary>Limit and in flight, one point per interval, oldest first.</summary>
    public IReadOnlyCollection<(int Limit, int InFlight)> History => _history;

    public void Update(LimitStateEvent state, int interval)
    {
        if (_last is { } last && state.Seconds > last.Seconds)
        {
            var seconds = state.Seconds - last.Seconds;
            OverloadsPerSecond = Math.Max(0, state.Overloads - last.Overloads) / seconds;
            PausesPerSecond = Math.Max(0, state.Pauses - last.Pauses) / seconds;
        }

        _last = state;
        Limit = state.Limit;
        InFlight = state.InFlight;
        Waiting = state.Waiting;
        LatencyMs = state.LatencyMs >= 0 ? state.LatencyMs : null;
        BaselineMs = state.BaselineMs > 0 ? state.BaselineMs : null;
        Changes = state.Changes;
        LastInterval = interval;
        _history.Enqueue((state.Limit, state.InFlight));
        while (_history.Count > WatchModel.HistoryLength)
        {
            _history.Dequeue();
        }
    }
}
