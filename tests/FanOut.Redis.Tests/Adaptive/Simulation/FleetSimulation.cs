using FanOut.Redis.Tests.Infrastructure.FakeClock;
using FanOut.Tests.Limits.Simulation;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Redis.Tests.Adaptive.Simulation;

/// <summary>
/// The simulation suite's closed-loop client (tests/FanOut.Tests/Limits/Simulation, <c>LimitSimulation</c>) for a fleet: P
/// <see cref="RedisConcurrencyLimit"/>s sharing one adaptive budget, as P processes would, against one scripted downstream
/// (<see cref="DownstreamScript"/>, linked from the suite), all on one <see cref="FakeTimeProvider"/> that the Redis server's
/// clock follows (<see cref="FakeClockRedisServer"/>).
/// </summary>
/// <remarks>
/// <para>Each process keeps as many calls in flight as its limit grants: a permit taken with <c>TryAcquire</c>, or, when that
/// fails, with <c>WaitAsync</c> (as a fan-out's worker waits for a shared limit), the call sent once the wait has completed.
/// A call answered 429 waits its Retry-After, or FanOut's jittered back-off, without a permit, and runs again up to
/// <see cref="OverloadRetries"/> times, as in the suite.</para>
/// <para>Time moves in steps of one millisecond: each step's answers are handled at its end (so the downstream's times are
/// rounded up to the millisecond). The clock moves only once the fleet has settled (every limit's
/// <see cref="RedisConcurrencyLimit.WhenAllSettledAsync"/>): the driver waits for
/// that event, never for the clock, so a loaded machine makes a run slower, not different. What stays nondeterministic is
/// the order in which Redis runs the scripts of several limits within one step, and the limits' jittered polls.</para>
/// </remarks>
public sealed class FleetSimulation
{
    /// <summary>The timeline's sampling period (the suite's).</summary>
    public static readonly TimeSpan SamplePeriod = TimeSpan.FromMilliseconds(10);

    private static readonly TimeSpan s_step = TimeSpan.FromMilliseconds(1);

    private readonly DownstreamScript _script;
    private readonly ScriptedDownstream<Call> _downstream;
    private readonly FakeClockRedisServer _server;
    private readonly Random _random;
    private readonly PriorityQueue<Call, (long, long)> _answers = new();
    private readonly PriorityQueue<Call, (long, long)> _retries = new();
    private readonly PriorityQueue<Call, (long, long)> _connecting = new();
    private readonly List<TimelineSample> _timeline = [];
    private long _sequence;
    private bool _answered;
    private int _idleConnections;
    private long _settledAt = -1;

    public FleetSimulation(DownstreamScript script, FakeClockRedisServer server, FakeTimeProvider clock, int seed = 1)
    {
        _script = script;
        _server = server;
        _random = new Random(seed);
        _downstream = new ScriptedDownstream<Call>(script, _random, Serve, Reject);
        Clock = clock;
        Start = clock.GetUtcNow();
        server.SetTime(Start);
    }

    /// <summary>When the run starts, on the fake clock (which the server's follows).</summary>
    public DateTimeOffset Start { get; }

    public FakeTimeProvider Clock { get; }

    /// <summary>What every call sent before the first answer came back pays (a cold stack), as in the suite.</summary>
    public TimeSpan ColdStart { get; init; }

    /// <summary>What a call that finds no idle connection pays before it reaches the downstream (a connect).</summary>
    public TimeSpan ConnectTime { get; init; }

    /// <summary>How long a 429 takes to come back.</summary>
    public TimeSpan RejectionTime { get; init; } = TimeSpan.FromMilliseconds(0.5);

    /// <summary>Re-runs of an item answered 429 before it fails (FanOut's default).</summary>
    public int OverloadRetries { get; init; } = 8;

    /// <summary>Bounds each wait for the fleet to settle (a hung Redis fails the run instead of hanging it).</summary>
    public TimeSpan SettleGuard { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>The fleet budget as the first limit sees it (0 while the fleet is paused), the permits all hold, the capacity, every <see cref="SamplePeriod"/>.</summary>
    public IReadOnlyList<TimelineSample> Timeline => _timeline;

    /// <summary>Every call the downstream saw, and whether it answered 429.</summary>
    public IReadOnlyList<(TimeSpan At, bool Rejected)> Calls => _downstream.Calls;

    public int Rejected => _downstream.Rejected;

    public int FailedItems { get; private set; }

    public int SucceededItems { get; private set; }

    /// <summary>Times the fleet had to be settled (a limit did something since the last time), for the figures.</summary>
    public int Settles { get; private set; }

    /// <summary>The run's real time (set by its driver), for the figures.</summary>
    public TimeSpan RealTime { get; set; }

    /// <summary>Real time spent waiting for the fleet to settle, for the figures.</summary>
    public TimeSpan SettleTime { get; private set; }

    /// <summary>When the last item completed (a run of a fixed number of items).</summary>
    public TimeSpan Elapsed { get; private set; }

    public TimeSpan Now => Clock.GetUtcNow() - Start;

    /// <summary>Runs <paramref name="items"/> items spread over the limits (all available at once), or items without end until <paramref name="duration"/>.</summary>
    public async Task<FleetSimulation> RunAsync(IReadOnlyList<RedisConcurrencyLimit> limits, int items = int.MaxValue, TimeSpan? duration = null)
    {
        var end = duration ?? TimeSpan.MaxValue;
        var processes = limits.Select((limit, p) => new Process(p, limit, items == int.MaxValue ? int.MaxValue : (items / limits.Count) + (p < items % limits.Count ? 1 : 0))).ToArray();
        var nextSample = TimeSpan.Zero;
        while (SucceededItems + FailedItems < items && Now < end)
        {
            // The clients: as many calls as the permits granted, until no process can send more without the clock.
            bool sent;
            do
            {
                sent = false;
                foreach (var process in processes)
                {
                    sent |= await SendAsync(process);
                }

                if (sent)
                {
                    await SettleAsync(limits);
                }
            }
            while (sent);

            if (Now >= nextSample)
            {
                _timeline.Add(new TimelineSample(Now, limits[0].FleetPaused ? 0 : limits[0].Current, limits.Sum(l => l.InFlight), _script.At(Now).Capacity));
                nextSample += SamplePeriod;
            }

            // The server's clock first: a loop the advance wakes may reach Redis at once.
            var next = Clock.GetUtcNow() + s_step;
            _server.SetTime(next);
            Clock.Advance(s_step);
            Arrivals();
            while (_retries.TryPeek(out var retry, out var due) && due.Item1 <= Now.Ticks)
            {
                _retries.Dequeue();
                processes[retry.Process].Ready.Enqueue((retry.Item, retry.Attempts));
            }

            while (_answers.TryPeek(out var call, out var due) && due.Item1 <= Now.Ticks)
            {
                _answers.Dequeue();
                Answer(call, processes[call.Process]);
            }

            await SettleAsync(limits);
        }

        Elapsed = Now;
        return this;
    }

    /// <summary>Waits until no limit of the fleet has anything left to do (<see cref="RedisConcurrencyLimit.WhenAllSettledAsync"/>).</summary>
    private async Task SettleAsync(IReadOnlyList<RedisConcurrencyLimit> limits)
    {
        if (limits.Sum(l => l.BackgroundWakeups) == _settledAt)
        {
            return; // nothing started since the fleet last settled: no loop woke, no message was handled
        }

        Settles++;
        var settleStart = System.Diagnostics.Stopwatch.GetTimestamp();
        using var guard = new CancellationTokenSource(SettleGuard);
        try
        {
            await RedisConcurrencyLimit.WhenAllSettledAsync([.. limits], guard.Token);
        }
        catch (OperationCanceledException)
        {
            throw new TimeoutException($"the fleet did not settle within {SettleGuard.TotalSeconds:F0} s at {Now.TotalMilliseconds} ms: " + string.Join("; ", limits.Select(Describe)));
        }

        SettleTime += System.Diagnostics.Stopwatch.GetElapsedTime(settleStart);
        _settledAt = limits.Sum(l => l.BackgroundWakeups);
    }

    private static string Describe(RedisConcurrencyLimit limit) =>
        $"wakeups {limit.BackgroundWakeups}, round trips {limit.RoundTrips}, held {limit.LeasesHeld}, idle {limit.IdleLeases}, in flight {limit.InFlight}, budget {limit.Current}";

    /// <summary>One process's client: sends items while its limit grants permits now; true when it sent any or started a wait.</summary>
    private async Task<bool> SendAsync(Process process)
    {
        var progressed = false;
        while (true)
        {
            var hasItem = process.Ready.Count > 0 || process.Next < process.Items;
            if (process.Wait is { } wait)
            {
                // The limit counts a granted waiter's permit at once; the task WaitAsync returned completes a continuation
                // later (the caller's side), so a grant is read from the count, and the task only collected after it.
                if (!wait.IsCompleted && process.Limit.InFlight == process.Held)
                {
                    return progressed;
                }

                process.Wait = null;
                if (!await wait.WaitAsync(SettleGuard))
                {
                    return progressed;
                }

                process.Held++;

                if (!hasItem)
                {
                    process.Held--;
                    process.Limit.Release(); // granted after the last item was sent
                    return true;
                }
            }
            else if (!hasItem)
            {
                return progressed;
            }
            else if (process.Limit.TryAcquire())
            {
                process.Held++;
            }
            else
            {
                process.Wait = process.Limit.WaitAsync(CancellationToken.None);
                progressed = true;
                continue;
            }

            var (item, attempts) = process.Ready.Count > 0 ? process.Ready.Dequeue() : (process.Next++, 0);
            // A call that finds no idle connection opens one first (a cold stack's before the first answer), as in the suite.
            var connect = _idleConnections > 0 ? TimeSpan.Zero : _answered ? ConnectTime : ColdStart;
            _idleConnections = Math.Max(0, _idleConnections - 1);
            Arrive(new Call(process.Index, item, process.Limit.RecordStart()) { SentAt = Now + connect, Attempts = attempts });
            progressed = true;
        }
    }

    /// <summary>Calls whose connect has passed reach the downstream.</summary>
    private void Arrivals()
    {
        while (_connecting.TryPeek(out var call, out var due) && due.Item1 <= Now.Ticks)
        {
            _connecting.Dequeue();
            _downstream.Arrive(call, Now);
        }
    }

    private void Arrive(Call call)
    {
        if (call.SentAt > Now)
        {
            _connecting.Enqueue(call, (call.SentAt.Ticks, _sequence++));
        }
        else
        {
            _downstream.Arrive(call, Now);
        }
    }

    private void Answer(Call call, Process process)
    {
        var limit = process.Limit;
        _answered = true;
        _idleConnections++;
        if (call.Served)
        {
            _downstream.Leave(Now);
        }

        limit.RecordCompletion(call.StartTimestamp, call.RetryAfter is null ? ItemOutcome.Succeeded : ItemOutcome.Overloaded, call.Hinted ? call.RetryAfter : null);
        process.Held--;
        limit.Release();
        if (call.RetryAfter is not { } retryAfter)
        {
            SucceededItems++;
        }
        else if (++call.Attempts > OverloadRetries)
        {
            FailedItems++;
        }
        else
        {
            _retries.Enqueue(call, ((Now + retryAfter).Ticks, _sequence++));
        }
    }

    /// <summary>The downstream answered 429: the item waits its Retry-After, or FanOut's own back-off when it gives none (full jitter up to 5 ms).</summary>
    private void Reject(Call call, TimeSpan? retryAfter)
    {
        call.Hinted = retryAfter is not null;
        call.RetryAfter = retryAfter ?? TimeSpan.FromMilliseconds(_random.NextDouble() * 5);
        _answers.Enqueue(call, ((Now + RejectionTime).Ticks, _sequence++));
    }

    /// <summary>The downstream serves the call: its answer comes back after <paramref name="serviceTime"/>.</summary>
    private void Serve(Call call, TimeSpan serviceTime)
    {
        call.Served = true;
        _answers.Enqueue(call, ((Now + serviceTime).Ticks, _sequence++));
    }

    /// <summary>One process: its limit, its items, its retries due and its pending wait for a permit.</summary>
    private sealed class Process(int index, RedisConcurrencyLimit limit, int items)
    {
        public RedisConcurrencyLimit Limit { get; } = limit;

        public int Items { get; } = items;

        public int Index { get; } = index;

        /// <summary>Items due to run again (answered 429 before), with the attempts they made.</summary>
        public Queue<(int Item, int Attempts)> Ready { get; } = new();

        public int Next { get; set; }

        public Task<bool>? Wait { get; set; }

        /// <summary>Permits this process's client holds (its calls in flight).</summary>
        public int Held { get; set; }
    }

    private sealed class Call(int process, int item, long startTimestamp)
    {
        public int Process { get; } = process;

        public int Item { get; } = item;

        public long StartTimestamp { get; } = startTimestamp;

        public TimeSpan SentAt { get; init; }

        public int Attempts { get; set; }

        public bool Served { get; set; }

        /// <summary>Set when the call is answered 429: how long the item waits before it runs again.</summary>
        public TimeSpan? RetryAfter { get; set; }

        /// <summary>True when <see cref="RetryAfter"/> is the downstream's Retry-After, not FanOut's own back-off.</summary>
        public bool Hinted { get; set; }
    }
}
