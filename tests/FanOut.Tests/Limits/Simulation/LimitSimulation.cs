using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// A discrete-event simulation of a fan-out on a <see cref="FakeTimeProvider"/>: a closed-loop client that keeps as many
/// calls in flight as a <see cref="ConcurrencyLimit"/> grants, against a <see cref="DownstreamScript"/>. The client does
/// what a fan-out does (an item answered 429 waits its Retry-After, or FanOut's jittered back-off, without a permit, and
/// runs again up to <see cref="OverloadRetries"/> times) and what an HTTP client pays (a call that finds no idle
/// connection opens one first: <see cref="ConnectTime"/>). Time jumps from event to event (at most a millisecond at a
/// time, so a limit's own timers fire on time); a run is exact and repeatable for a seed, and takes no wall-clock time.
/// </summary>
public sealed class LimitSimulation
{
    /// <summary>The timeline's sampling period.</summary>
    public static readonly TimeSpan SamplePeriod = TimeSpan.FromMilliseconds(10);

    /// <summary>A time step's ceiling, so a limit's own timers fire no later than this after their due time.</summary>
    private static readonly TimeSpan s_maxStep = TimeSpan.FromMilliseconds(1);

    private readonly DownstreamScript _script;
    private readonly ScriptedDownstream<Call> _downstream;
    private readonly Random _random;
    private readonly PriorityQueue<Event, (long, long)> _events = new();
    private readonly Queue<int> _ready = new();
    private readonly List<TimelineSample> _timeline = [];
    private readonly List<TimeSpan> _successes = [];
    private readonly DateTimeOffset _start = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);
    private long _sequence;
    private int _idleConnections;
    private bool _answered;
    private TimeSpan _connectorFree;

    public LimitSimulation(DownstreamScript script, int seed = 1)
    {
        _script = script;
        _random = new Random(seed);
        _downstream = new ScriptedDownstream<Call>(script, _random, Serve, Reject);
        Clock = new FakeTimeProvider(_start);
    }

    public FakeTimeProvider Clock { get; }

    /// <summary>What a call that finds no idle connection pays before it reaches the downstream (a connect).</summary>
    public TimeSpan ConnectTime { get; init; }

    /// <summary>
    /// True when connections open one after another, as over loopback on a busy machine (the client's and the server's accept
    /// loop share two cores): a call that must connect waits for the connects before it, so a burst of N new connections takes
    /// N x <see cref="ConnectTime"/> (64 at once: 10-15 ms measured).
    /// </summary>
    public bool ConnectsInSeries { get; init; }

    /// <summary>What every call sent before the first answer came back pays instead (a cold stack: JIT, first connects).</summary>
    public TimeSpan ColdStart { get; init; }

    /// <summary>How long a 429 takes to come back (on an open connection).</summary>
    public TimeSpan RejectionTime { get; init; } = TimeSpan.FromMilliseconds(0.5);

    /// <summary>True when a call refused for want of room holds its place in service until its "no" has gone back (<see cref="ScriptedDownstream{TCall}.RefusalsTakeAPlace"/>).</summary>
    public bool RefusalsTakeAPlace { get => _downstream.RefusalsTakeAPlace; init => _downstream.RefusalsTakeAPlace = value; }

    /// <summary>
    /// Items per call: the items come in calls of this many, each call's once the one before has completed (a limit shared by
    /// many short calls); by default one call of all of them.
    /// </summary>
    public int CallSize { get; init; } = int.MaxValue;

    /// <summary>Re-runs of an item answered 429 before it fails (FanOut's default).</summary>
    public int OverloadRetries { get; init; } = 8;

    /// <summary>The limit, its permits taken and the downstream's capacity, every <see cref="SamplePeriod"/>.</summary>
    public IReadOnlyList<TimelineSample> Timeline => _timeline;

    /// <summary>Every call the downstream saw, and whether it answered 429.</summary>
    public IReadOnlyList<(TimeSpan At, bool Rejected)> Calls => _downstream.Calls;

    /// <summary>When each successful call came back.</summary>
    public IReadOnlyList<TimeSpan> Successes => _successes;

    public int Rejected => _downstream.Rejected;

    /// <summary>Items that ran out of re-runs.</summary>
    public int FailedItems { get; private set; }

    public int SucceededItems { get; private set; }

    /// <summary>When the last item completed (a run of a fixed number of items).</summary>
    public TimeSpan Elapsed { get; private set; }

    public TimeSpan Now => Clock.GetUtcNow() - _start;

    /// <summary>Limit options on this simulation's clock.</summary>
    public AdaptiveLimitOptions Options(AdaptiveLimitOptions? options = null) => (options ?? new AdaptiveLimitOptions()) with { TimeProvider = Clock };

    /// <summary>Runs <paramref name="items"/> items (all available at once), or items without end until <paramref name="duration"/>.</summary>
    public LimitSimulation Run(ConcurrencyLimit limit, int items = int.MaxValue, TimeSpan? duration = null)
    {
        var end = duration ?? TimeSpan.MaxValue;
        var next = 0;
        var callEnd = Math.Min(items, CallSize);
        var attempts = new Dictionary<int, int>();
        var nextSample = TimeSpan.Zero;
        while (SucceededItems + FailedItems < items && Now < end)
        {
            SendWhatTheLimitGrants();
            if (Now >= nextSample)
            {
                _timeline.Add(new TimelineSample(Now, limit.Current, limit.InFlight, _script.At(Now).Capacity));
                nextSample += SamplePeriod;
            }

            var until = _events.TryPeek(out _, out var due) ? Math.Min(due.Item1, (Now + s_maxStep).Ticks) : (Now + s_maxStep).Ticks;
            if (until > Now.Ticks)
            {
                Clock.Advance(TimeSpan.FromTicks(until - Now.Ticks));
            }

            while (_events.TryPeek(out var e, out due) && due.Item1 <= Now.Ticks)
            {
                _events.Dequeue();
                Handle(e, limit, attempts);

                SendWhatTheLimitGrants(); // a fan-out's worker sends its next item as its last one completes, before the next answer
            }
        }

        Elapsed = Now;
        return this;

        // The client: re-runs due first (in the order they became due), then new items, while the limit grants permits.
        void SendWhatTheLimitGrants()
        {
            if (SucceededItems + FailedItems >= callEnd)
            {
                callEnd = (int)Math.Min(items, (long)callEnd + CallSize);
            }

            while ((_ready.Count > 0 || next < callEnd) && limit.TryAcquire())
            {
                var item = _ready.Count > 0 ? _ready.Dequeue() : next++;
                Send(new Call(item, limit.RecordStart()));
            }
        }
    }

    private void Handle(Event e, ConcurrencyLimit limit, Dictionary<int, int> attempts)
    {
        switch (e.Kind)
        {
            case EventKind.Arrive:
                _downstream.Arrive(e.Call, Now);
                break;
            case EventKind.Retry:
                _ready.Enqueue(e.Call.Item);
                break;
            case EventKind.Answer:
                _answered = true;
                _idleConnections++;
                if (e.Call.Served)
                {
                    _downstream.Leave(Now);
                }

                // The downstream's Retry-After goes to the limit as a fan-out's completion path tells it (FanOut's own back-off does not).
                limit.RecordCompletion(e.Call.StartTimestamp, e.Call.RetryAfter is null ? ItemOutcome.Succeeded : ItemOutcome.Overloaded, e.Call.Hinted ? e.Call.RetryAfter : null);
                limit.Release();
                if (e.Call.RetryAfter is not { } retryAfter)
                {
                    _successes.Add(Now);
                    SucceededItems++;
                }
                else if ((attempts[e.Call.Item] = attempts.GetValueOrDefault(e.Call.Item) + 1) > OverloadRetries)
                {
                    FailedItems++;
                }
                else
                {
                    Schedule(Now + retryAfter, EventKind.Retry, e.Call);
                }

                break;
        }
    }

    private void Send(Call call)
    {
        if (_idleConnections > 0)
        {
            _idleConnections--;
            _downstream.Arrive(call, Now);
        }
        else if (_answered && ConnectsInSeries)
        {
            _connectorFree = (_connectorFree > Now ? _connectorFree : Now) + ConnectTime;
            Schedule(_connectorFree, EventKind.Arrive, call);
        }
        else
        {
            Schedule(Now + (_answered ? ConnectTime : ColdStart), EventKind.Arrive, call);
        }
    }

    /// <summary>
    /// The downstream answered 429: the item waits its Retry-After, or FanOut's own back-off when it gives none (full jitter
    /// up to 5 ms x 2^(attempt - 1)).
    /// </summary>
    private void Reject(Call call, TimeSpan? retryAfter)
    {
        call.Hinted = retryAfter is not null;
        call.Served = RefusalsTakeAPlace && retryAfter is null;
        call.RetryAfter = retryAfter ?? TimeSpan.FromMilliseconds(_random.NextDouble() * 5);
        Schedule(Now + RejectionTime, EventKind.Answer, call);
    }

    /// <summary>The downstream serves the call: its answer comes back after <paramref name="serviceTime"/>.</summary>
    private void Serve(Call call, TimeSpan serviceTime)
    {
        call.Served = true;
        Schedule(Now + serviceTime, EventKind.Answer, call);
    }

    private void Schedule(TimeSpan at, EventKind kind, Call call) => _events.Enqueue(new Event(kind, call), (at.Ticks, _sequence++));

    private enum EventKind
    {
        Arrive,
        Answer,
        Retry,
    }

    private readonly record struct Event(EventKind Kind, Call Call);

    private sealed class Call(int item, long startTimestamp)
    {
        public int Item { get; } = item;

        public long StartTimestamp { get; } = startTimestamp;

        public bool Served { get; set; }

        /// <summary>Set when the call is answered 429: how long the item waits before it runs again.</summary>
        public TimeSpan? RetryAfter { get; set; }

        /// <summary>True when <see cref="RetryAfter"/> is the downstream's Retry-After, not FanOut's own back-off.</summary>
        public bool Hinted { get; set; }
    }
}
