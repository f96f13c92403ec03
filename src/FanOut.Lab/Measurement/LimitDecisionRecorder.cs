using System.Diagnostics;
using System.Diagnostics.Tracing;

using FanOut.Diagnostics;
using FanOut.Lab.Results;

namespace FanOut.Lab.Measurement;

/// <summary>Records why one named adaptive limit changed during a run: the "FanOut" event source's <c>LimitChanged</c>
/// events of that limit, read by an in-process <see cref="EventListener"/>, at most <see cref="MaxDecisions"/> of them.</summary>
/// <remarks>
/// The event source is process-wide, so only the events whose name is the run's limit's
/// (<see cref="AdaptiveLimitOptions.Name"/>) are kept: a server's own limit in the same process, or a test's beside it, is
/// not this run's. The events come on the threads that changed the limit, outside its lock, so the list is guarded by a
/// lock of its own; a change is rare next to an item (slow start's steps are the most frequent). The list is one array
/// allocated up front: when it fills, neighbouring <see cref="LimitChangeReason.SlowStartGrowth"/> steps are merged into
/// one entry, then slow-start entries (never drawn as markers) are given up, and only then later changes are counted in
/// <see cref="Dropped"/> instead of kept. Enabling the event source makes each change allocate its event's payload: a
/// recorded run's allocated bytes include that.
/// </remarks>
public sealed class LimitDecisionRecorder : IDisposable
{
    /// <summary>The most decisions kept for one run.</summary>
    public const int MaxDecisions = 500;

    /// <summary>Times are kept to 10 us, as the timeline's.</summary>
    private const int TimeDecimals = 2;

    private readonly Lock _lock = new();
    private readonly LimitDecision?[] _kept = new LimitDecision?[MaxDecisions];
    private readonly Listener _listener;
    private long _startTimestamp;
    private int _count;
    private int _dropped;
    private bool _stopped;

    /// <summary>A recorder of the changes of the limit named <paramref name="limitName"/>, listening from now on.</summary>
    public LimitDecisionRecorder(string limitName)
    {
        ArgumentException.ThrowIfNullOrEmpty(limitName);
        LimitName = limitName;
        _startTimestamp = Stopwatch.GetTimestamp();
        _listener = new Listener(this);
    }

    /// <summary>The name of the limit whose changes are recorded.</summary>
    public string LimitName { get; }

    /// <summary>Changes not kept: beyond <see cref="MaxDecisions"/> once slow-start steps were merged and given up.</summary>
    public int Dropped
    {
        get
        {
            lock (_lock)
            {
                return _dropped;
            }
        }
    }

    /// <summary>Sets time zero (a <see cref="Stopwatch"/> timestamp); call when the run starts.</summary>
    public void Start(long timestamp) => _startTimestamp = timestamp;

    /// <summary>Keeps one change of the limit, decided at <paramref name="timestamp"/>; ignored after <see cref="Stop"/>.</summary>
    public void Record(long timestamp, int from, int to, string reason, double windowMedianMs, double baselineMs, int inFlight)
    {
        ArgumentNullException.ThrowIfNull(reason);
        var decision = new LimitDecision
        {
            TimeMs = Math.Round(Math.Max(0, Stopwatch.GetElapsedTime(_startTimestamp, timestamp).TotalMilliseconds), TimeDecimals),
            From = from,
            To = to,
            Reason = reason,
            WindowMedianMs = windowMedianMs,
            BaselineMs = baselineMs,
            InFlight = inFlight,
        };
        lock (_lock)
        {
            if (_stopped)
            {
                return;
            }

            if (_count == MaxDecisions)
            {
                MakeRoom();
            }

            if (_count == MaxDecisions)
            {
                _dropped++;
                return;
            }

            _kept[_count++] = decision;
        }
    }

    /// <summary>Stops listening: changes after this (a pause's timer after the run) are not the run's.</summary>
    public void Stop()
    {
        lock (_lock)
        {
            if (_stopped)
            {
                return;
            }

            _stopped = true;
        }

        _listener.Dispose();
    }

    /// <summary>The decisions kept, in the order they were made.</summary>
    public IReadOnlyList<LimitDecision> Decisions()
    {
        lock (_lock)
        {
            return _kept[.._count].Select(d => d!).ToArray();
        }
    }

    /// <inheritdoc/>
    public void Dispose() => Stop();

    private static bool IsSlowStart(LimitDecision? d) => d?.Reason == nameof(LimitChangeReason.SlowStartGrowth);

    /// <summary>Frees entries of a full list: merges neighbouring slow-start steps, else gives up slow-start entries (under the lock).</summary>
    private void MakeRoom()
    {
        var kept = 0;
        for (var i = 0; i < _count; i++)
        {
            var d = _kept[i]!;
            if (kept > 0 && IsSlowStart(d) && _kept[kept - 1] is { } before && IsSlowStart(before) && before.To == d.From)
            {
                // One entry from the first step's start to the last step's end, at the last step's time and figures.
                _kept[kept - 1] = d with { From = before.From, Steps = before.Steps + d.Steps };
                continue;
            }

            _kept[kept++] = d;
        }

        if (kept == _count)
        {
            kept = 0;
            for (var i = 0; i < _count; i++)
            {
                if (IsSlowStart(_kept[i]))
                {
                    _dropped += _kept[i]!.Steps;
                    continue;
                }

                _kept[kept++] = _kept[i];
            }
        }

        Array.Clear(_kept, kept, _count - kept);
        _count = kept;
    }

    /// <summary>Hands the "FanOut" event source's <c>LimitChanged</c> events of the named limit to the recorder.</summary>
    private sealed class Listener : EventListener
    {
        // Null while the base constructor runs: it enables the source (OnEventSourceCreated) before this is assigned,
        // and an event another thread writes meanwhile is not this run's yet.
        private readonly LimitDecisionRecorder? _owner;

        public Listener(LimitDecisionRecorder owner) => _owner = owner;

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == FanOutEvents.SourceName)
            {
                EnableEvents(eventSource, EventLevel.Informational);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            var timestamp = Stopwatch.GetTimestamp();
            if (_owner is not { } owner || eventData.EventId != FanOutEvents.LimitChangedId || eventData.Payload is not { Count: >= 8 } p
                || p[1] is not string name || name != owner.LimitName
                || p is not [_, _, int from, int to, string reason, double windowMedianMs, double baselineMs, int inFlight, ..])
            {
                return;
            }

            owner.Record(timestamp, from, to, reason, windowMedianMs, baselineMs, inFlight);
        }
    }
}
