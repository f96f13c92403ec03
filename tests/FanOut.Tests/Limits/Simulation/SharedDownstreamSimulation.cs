using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Independent clients on one downstream, as separate services are: each a closed loop of items without end, with its own
/// <see cref="ConcurrencyLimit"/> (nothing shared but the downstream), joining at its own time. Time is one
/// <see cref="FakeTimeProvider"/> all the limits read, advanced from event to event (at most a millisecond at a time), as in
/// <see cref="LimitSimulation"/>. The items never end, so a call answered 429 gives its permit to the client's next item.
/// </summary>
public sealed class SharedDownstreamSimulation
{
    private static readonly TimeSpan s_maxStep = TimeSpan.FromMilliseconds(1);

    private readonly ScriptedDownstream<Call> _downstream;
    private readonly Random _random;
    private readonly PriorityQueue<Call, (long, long)> _events = new();
    private readonly DateTimeOffset _start = new(2026, 1, 1, 0, 0, 0, TimeSpan.Zero);
    private readonly List<Client> _clients = [];
    private long _sequence;

    public SharedDownstreamSimulation(DownstreamScript script, int seed = 1)
    {
        _random = new Random(seed);
        _downstream = new ScriptedDownstream<Call>(script, _random, Serve, Reject);
        Clock = new FakeTimeProvider(_start);
    }

    public FakeTimeProvider Clock { get; }

    public TimeSpan Now => Clock.GetUtcNow() - _start;

    /// <summary>How long a 429 takes to come back.</summary>
    public TimeSpan RejectionTime { get; init; } = TimeSpan.FromMilliseconds(0.5);

    /// <summary>Calls the downstream answered 429.</summary>
    public int Rejected => _downstream.Rejected;

    /// <summary>Adds a client whose limit is made on this simulation's clock, joining at <paramref name="joinsAt"/>.</summary>
    public SharedDownstreamSimulation AddClient(Func<TimeProvider, ConcurrencyLimit> limit, TimeSpan joinsAt = default)
    {
        _clients.Add(new Client(limit(Clock), joinsAt));
        return this;
    }

    /// <summary>Runs until <paramref name="duration"/>.</summary>
    public SharedDownstreamSimulation Run(TimeSpan duration)
    {
        while (Now < duration)
        {
            Send();
            var until = _events.TryPeek(out _, out var due) ? Math.Min(due.Item1, (Now + s_maxStep).Ticks) : (Now + s_maxStep).Ticks;
            if (until > Now.Ticks)
            {
                Clock.Advance(TimeSpan.FromTicks(until - Now.Ticks));
            }

            while (_events.TryPeek(out var e, out due) && due.Item1 <= Now.Ticks)
            {
                _events.Dequeue();
                Handle(e);
                Send();
            }
        }

        return this;
    }

    /// <summary>Successful calls of client <paramref name="client"/> that came back within [<paramref name="from"/>, <paramref name="to"/>).</summary>
    public int Successes(int client, TimeSpan from, TimeSpan to) => _clients[client].Successes.Count(t => t >= from && t < to);

    /// <summary>The limit of client <paramref name="client"/>.</summary>
    public ConcurrencyLimit Limit(int client) => _clients[client].Limit;

    /// <summary>Jain's fairness index of the clients' successes within [<paramref name="from"/>, <paramref name="to"/>): 1 when equal, 1/n when one has everything.</summary>
    public double Fairness(TimeSpan from, TimeSpan to)
    {
        var shares = _clients.Select((_, i) => (double)Successes(i, from, to)).ToArray();
        var sum = shares.Sum();
        return sum == 0 ? 0 : sum * sum / (shares.Length * shares.Sum(x => x * x));
    }

    private void Send()
    {
        foreach (var client in _clients)
        {
            while (Now >= client.JoinsAt && client.Limit.TryAcquire())
            {
                var call = new Call(client, client.Limit.RecordStart());
                _downstream.Arrive(call, Now);
            }
        }
    }

    private void Handle(Call call)
    {
        if (call.Served)
        {
            _downstream.Leave(Now);
        }

        call.Client.Limit.RecordCompletion(call.Start, call.Rejected ? ItemOutcome.Overloaded : ItemOutcome.Succeeded, call.RetryAfter);
        call.Client.Limit.Release();
        if (!call.Rejected)
        {
            call.Client.Successes.Add(Now);
        }
    }

    private void Serve(Call call, TimeSpan serviceTime)
    {
        call.Served = true;
        _events.Enqueue(call, ((Now + serviceTime).Ticks, _sequence++));
    }

    private void Reject(Call call, TimeSpan? retryAfter)
    {
        call.Rejected = true;
        call.RetryAfter = retryAfter;
        _events.Enqueue(call, ((Now + RejectionTime).Ticks, _sequence++));
    }

    private sealed class Client(ConcurrencyLimit limit, TimeSpan joinsAt)
    {
        public ConcurrencyLimit Limit { get; } = limit;

        public TimeSpan JoinsAt { get; } = joinsAt;

        public List<TimeSpan> Successes { get; } = [];
    }

    private sealed class Call(Client client, long start)
    {
        public Client Client { get; } = client;

        public long Start { get; } = start;

        /// <summary>The downstream's Retry-After on its "no" (none: FanOut's own back-off), told to the limit.</summary>
        public TimeSpan? RetryAfter { get; set; }

        public bool Served { get; set; }

        public bool Rejected { get; set; }
    }
}
