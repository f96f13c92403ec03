using System.Collections.Concurrent;

namespace FanOut.FaultInjection;

/// <summary>Records what one call did (bodies, source calls) and the violations seen while it ran.</summary>
public sealed class CaseProbe(FaultCase faultCase, LimitProbe limit)
{
    private readonly int[] _runs = new int[faultCase.ItemCount];
    private int _activeBodies;
    private int _activeSourceCalls;
    private volatile bool _returned;

    public FaultCase Case => faultCase;

    /// <summary>The limit the case's call runs on (nested bodies take leases and run inner calls on it).</summary>
    public ConcurrencyLimit? Limit { get; set; }

    public ConcurrentQueue<string> Violations { get; } = new();

    public CancellationTokenSource Caller { get; } = new();

    public int Runs(int item) => Volatile.Read(ref _runs[item]);

    public bool CancelRequested { get; private set; }

    // Source bookkeeping (written by the instrumented enumerator).
    public int GetEnumeratorCalls;
    public int Disposals;
    public bool DisposedBeforeLastMoveNext;
    public bool SourceThrew;

    public void EnterBody(int item)
    {
        if (_returned)
        {
            Violations.Enqueue($"body of item {item} started after the call returned");
        }

        if (Interlocked.Increment(ref _runs[item]) > 1)
        {
            Violations.Enqueue($"body of item {item} ran more than once");
        }

        Interlocked.Increment(ref _activeBodies);
        limit.Enter();
        if (item == faultCase.CancelAtItem)
        {
            CancelRequested = true;
            Caller.Cancel();
        }
    }

    public void ExitBody()
    {
        limit.Exit();
        Interlocked.Decrement(ref _activeBodies);
    }

    public void EnterSource(string what)
    {
        if (_returned)
        {
            Violations.Enqueue($"source {what} called after the call returned");
        }

        Interlocked.Increment(ref _activeSourceCalls);
    }

    public void ExitSource() => Interlocked.Decrement(ref _activeSourceCalls);

    /// <summary>Called the moment the call's task (or the stream's DisposeAsync) completed.</summary>
    public void Returned()
    {
        _returned = true;
        if (Volatile.Read(ref _activeBodies) != 0)
        {
            Violations.Enqueue($"{_activeBodies} bodies still running after the call returned");
        }

        if (Volatile.Read(ref _activeSourceCalls) != 0)
        {
            Violations.Enqueue($"{_activeSourceCalls} source calls still running after the call returned");
        }
    }
}

/// <summary>Bodies in flight on one shared limit, across every call of a trial.</summary>
public sealed class LimitProbe
{
    private int _active;
    private int _peak;

    public int Peak => Volatile.Read(ref _peak);

    public void Enter()
    {
        var now = Interlocked.Increment(ref _active);
        var peak = Volatile.Read(ref _peak);
        while (now > peak && Interlocked.CompareExchange(ref _peak, now, peak) != peak)
        {
            peak = Volatile.Read(ref _peak);
        }
    }

    public void Exit() => Interlocked.Decrement(ref _active);
}
