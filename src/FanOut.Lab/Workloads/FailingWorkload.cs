using FanOut.Lab.Outcomes;

namespace FanOut.Lab.Workloads;

/// <summary>Items that wait, some of which then throw: seed 000's error and cancellation rows.</summary>
/// <remarks>
/// The asynchronous body awaits <c>Task.Delay</c> (with the token, or ignoring it as a body that never looks at the
/// token would); the synchronous body, for Parallel.ForEach, sleeps. Every item reports its start and end to
/// <see cref="Outcomes"/>, so the lab can count what ran after the first failure or the caller's cancellation.
/// </remarks>
public sealed class FailingWorkload : Workload
{
    private readonly int _delayMs;
    private readonly bool[] _fails;
    private readonly int[] _failingItems;
    private readonly bool _honorsToken;
    private readonly TimeProvider _timeProvider;

    /// <summary>Creates the workload.</summary>
    /// <param name="itemCount">N.</param>
    /// <param name="delayMs">Each item's wait.</param>
    /// <param name="failingItems">The items that throw an <see cref="ItemFailedException"/> after their wait.</param>
    /// <param name="honorsToken">False for a body that ignores its cancellation token.</param>
    /// <param name="timeProvider">The clock of the asynchronous waits and of the outcome stamps (the system clock when null).</param>
    public FailingWorkload(int itemCount, int delayMs, IReadOnlyList<int> failingItems, bool honorsToken = true, TimeProvider? timeProvider = null)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        ArgumentOutOfRangeException.ThrowIfNegative(delayMs);
        ArgumentNullException.ThrowIfNull(failingItems);
        _delayMs = delayMs;
        _honorsToken = honorsToken;
        _fails = new bool[itemCount];
        foreach (var item in failingItems)
        {
            ArgumentOutOfRangeException.ThrowIfNegative(item, nameof(failingItems));
            ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(item, itemCount, nameof(failingItems));
            _fails[item] = true;
        }

        _failingItems = [.. failingItems.Order()];
        _timeProvider = timeProvider ?? TimeProvider.System;
        Outcomes = new OutcomeRecorder(_timeProvider);
    }

    /// <summary>False for a body that ignores its cancellation token (it runs to its end after the caller cancels).</summary>
    public bool HonorsToken => _honorsToken;

    /// <inheritdoc/>
    /// <remarks>A failing run stops soon after its first failure (fail-fast strategies): the waves of items up to it, plus one wait
    /// for the items in flight then; never more than the ideal time of the whole run.</remarks>
    public override double EstimateRunMs(double idealMs, int concurrency) => _failingItems.Length == 0
        ? idealMs
        : Math.Min(idealMs, (Math.Ceiling((_failingItems[0] + 1.0) / Math.Max(1, concurrency)) + 1) * _delayMs);

    /// <summary>What the items did in the current run.</summary>
    public OutcomeRecorder Outcomes { get; }

    /// <inheritdoc/>
    public override string Name => (_failingItems.Length, _honorsToken) switch
    {
        (0, true) => $"wait {_delayMs}ms",
        (0, false) => $"wait {_delayMs}ms, token ignored",
        (1, _) => $"wait {_delayMs}ms, item {_failingItems[0]} throws",
        _ => $"wait {_delayMs}ms, items {string.Join(',', _failingItems)} throw",
    };

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>
    {
        ["delayMs"] = _delayMs,
        ["failing"] = _failingItems.Length,
        ["honorsToken"] = _honorsToken ? 1 : 0,
    };

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Both;

    /// <inheritdoc/>
    public override WorkProfile Profile => new(Enumerable.Repeat(_delayMs, _fails.Length).ToArray(), UsesCpu: false);

    /// <inheritdoc/>
    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        using var scope = Probe.Enter();
        Outcomes.Started(index);
        try
        {
            await Task.Delay(TimeSpan.FromMilliseconds(_delayMs), _timeProvider, _honorsToken ? cancellationToken : CancellationToken.None).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            Outcomes.Canceled();
            throw;
        }

        End(index);
    }

    /// <inheritdoc/>
    /// <remarks>A synchronous body gets no token: it cannot stop early, only not be started.</remarks>
    public override void Run(int index)
    {
        using var scope = Probe.Enter();
        Outcomes.Started(index);
        Thread.Sleep(_delayMs);
        End(index);
    }

    private void End(int index)
    {
        if (_fails[index])
        {
            Outcomes.Failed(index);
            throw new ItemFailedException(index);
        }

        Outcomes.Completed();
    }
}
