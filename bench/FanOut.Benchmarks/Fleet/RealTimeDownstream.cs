using System.Collections.Concurrent;

using FanOut.Tests.Limits.Simulation;

namespace FanOut.Benchmarks.Fleet;

/// <summary>
/// The simulation suite's <see cref="DownstreamScript"/> served in real time, in process, to every client at once: a call
/// is served while fewer than the capacity are (FIFO queue beyond it, up to the queue's length), answered with an
/// <see cref="OverloadedException"/> at once beyond that (no Retry-After: the caller's own back-off), and with the storm's
/// Retry-After while one is scripted. Service times spread as the suite's (steady: +-10%; heavy tail: p99 = 10x the median).
/// </summary>
/// <remarks>
/// The suite's <c>LimitSimulation</c> runs the same scripts on a fake clock; this one is for limits that cannot run on one
/// (the Redis fleet budget, timed by the Redis server's clock): docs/adaptive.md, "Simulation suite".
/// </remarks>
internal sealed class RealTimeDownstream(DownstreamScript script, int seed = 1)
{
    /// <summary>ln(10) / 2.326 (the p99 z-score): p99 at 10x the median, as the suite's heavy tail.</summary>
    private const double HeavyTailSigma = 0.99;

    private readonly long _start = TimeProvider.System.GetTimestamp();
    private readonly Lock _lock = new();
    private readonly Random _random = new(seed);
    private readonly Queue<TaskCompletionSource> _queue = new();
    private readonly ConcurrentQueue<(TimeSpan At, bool Rejected)> _calls = new();
    private int _served;

    /// <summary>The time since the downstream started: the script's clock.</summary>
    public TimeSpan Now => TimeProvider.System.GetElapsedTime(_start);

    /// <summary>Every call that reached the downstream (a queued one when it is served), and whether it was answered "overloaded".</summary>
    public IReadOnlyCollection<(TimeSpan At, bool Rejected)> Calls => _calls;

    /// <summary>The capacity the script gives now.</summary>
    public int Capacity => script.At(Now).Capacity;

    /// <summary>One call: served, queued then served, or rejected at once.</summary>
    /// <exception cref="OverloadedException">Beyond the capacity and the queue, or during a scripted storm (with its Retry-After).</exception>
    public async ValueTask CallAsync(CancellationToken cancellationToken)
    {
        var at = Now;
        var state = script.At(at);
        TaskCompletionSource? queued = null;
        bool serve;
        lock (_lock)
        {
            serve = state.RetryAfter is null && _served < state.Capacity && _queue.Count == 0;
            if (serve)
            {
                _served++;
            }
            else if (state.RetryAfter is null && _queue.Count < state.Queue)
            {
                queued = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                _queue.Enqueue(queued);
            }
        }

        if (!serve && queued is null)
        {
            _calls.Enqueue((at, true));
            throw state.RetryAfter is { } storm ? new OverloadedException("storm", storm) : new OverloadedException("over capacity");
        }

        if (queued is not null)
        {
            await queued.Task.ConfigureAwait(false); // admitted (and counted as served) by the call that made room
            state = script.At(Now);
        }

        _calls.Enqueue((Now, false));
        try
        {
            await Task.Delay(ServiceTime(state), cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            Leave();
        }
    }

    /// <summary>A served call ends: the oldest queued call takes its place while the capacity (which the script may have changed) has room.</summary>
    private void Leave()
    {
        List<TaskCompletionSource>? admitted = null;
        lock (_lock)
        {
            _served--;
            var capacity = script.At(Now).Capacity;
            while (_queue.Count > 0 && _served < capacity)
            {
                _served++;
                (admitted ??= []).Add(_queue.Dequeue());
            }
        }

        admitted?.ForEach(t => t.SetResult()); // outside the lock: continuations run asynchronously anyway
    }

    private TimeSpan ServiceTime(DownstreamState state)
    {
        double u1, u2;
        lock (_lock)
        {
            u1 = 1.0 - _random.NextDouble();
            u2 = _random.NextDouble();
        }

        var factor = state.Shape == LatencyShape.HeavyTail
            ? Math.Exp(HeavyTailSigma * Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2))
            : 0.9 + (0.2 * u2);
        return TimeSpan.FromTicks(Math.Max(1, (long)(state.Latency.Ticks * factor)));
    }
}
