using System.Collections.Concurrent;

namespace FanOut.Conformance.Tests.Infrastructure;

/// <summary>
/// What the bodies of one call did: how many started and finished, how many ran at once (the most, ever), in which order
/// items started, and which tokens they were given. Bodies call <see cref="Enter"/> first and <see cref="Exit"/> last.
/// </summary>
public sealed class Tracker
{
    private readonly Lock _lock = new();
    private readonly List<(int Count, TaskCompletionSource Signal)> _startWaiters = [];
    private readonly List<int> _startOrder = [];
    private int _active;
    private int _maxActive;
    private int _started;
    private int _finished;

    /// <summary>Bodies that started.</summary>
    public int Started => Volatile.Read(ref _started);

    /// <summary>Bodies that finished (returned or threw).</summary>
    public int Finished => Volatile.Read(ref _finished);

    /// <summary>Bodies running right now.</summary>
    public int Active => Volatile.Read(ref _active);

    /// <summary>The most bodies that ever ran at once.</summary>
    public int MaxActive => Volatile.Read(ref _maxActive);

    /// <summary>Items in the order their bodies started.</summary>
    public IReadOnlyList<int> StartOrder
    {
        get
        {
            lock (_lock)
            {
                return [.. _startOrder];
            }
        }
    }

    /// <summary>Every token a body was given.</summary>
    public ConcurrentBag<CancellationToken> Tokens { get; } = [];

    /// <summary>Marks a body's start.</summary>
    public void Enter(int item, CancellationToken token = default)
    {
        Tokens.Add(token);
        List<TaskCompletionSource>? reached = null;
        lock (_lock)
        {
            _startOrder.Add(item);
            _started++;
            _active++;
            _maxActive = Math.Max(_maxActive, _active);
            for (var i = _startWaiters.Count - 1; i >= 0; i--)
            {
                if (_startWaiters[i].Count <= _started)
                {
                    (reached ??= []).Add(_startWaiters[i].Signal);
                    _startWaiters.RemoveAt(i);
                }
            }
        }

        // Outside the lock: the gates continue asynchronously anyway.
        reached?.ForEach(static s => s.TrySetResult());
    }

    /// <summary>Marks a body's end.</summary>
    public void Exit()
    {
        lock (_lock)
        {
            _active--;
            _finished++;
        }
    }

    /// <summary>A tracked body that waits on its token: it ends with that token's <see cref="OperationCanceledException"/> once the token is canceled.</summary>
    public async ValueTask<int> BlockedUntilCanceledAsync(int item, CancellationToken token)
    {
        Enter(item, token);
        try
        {
            await Task.Delay(Timeout.Infinite, token); // throws OperationCanceledException(token) on cancellation
            return item;
        }
        finally
        {
            Exit();
        }
    }

    /// <summary>A tracked body that yields once and returns its item.</summary>
    public async ValueTask<int> YieldOnceAsync(int item, CancellationToken token)
    {
        Enter(item, token);
        await Task.Yield();
        Exit();
        return item;
    }

    /// <summary>Completes once <paramref name="count"/> bodies have started.</summary>
    public Task WhenStarted(int count)
    {
        lock (_lock)
        {
            if (_started >= count)
            {
                return Task.CompletedTask;
            }

            var signal = Wait.Gate();
            _startWaiters.Add((count, signal));
            return signal.Task;
        }
    }
}
