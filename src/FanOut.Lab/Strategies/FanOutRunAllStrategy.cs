namespace FanOut.Lab.Strategies;

/// <summary>FanOut in <see cref="ErrorMode.RunAll"/> with the library's default limit (<c>ConcurrencyLimit.Adaptive()</c>, what
/// no limit gives) or a <c>Fixed(n)</c>: every item runs, the workload counts each failure, and the run's
/// <see cref="FanOutException"/> is expected, not a failed case.</summary>
/// <remarks>The adaptive default runs an item again after an overload answer (its default <c>OverloadRetries</c>); a fixed limit
/// never does, so there an overload fails the item. <see cref="LimitNow"/> reads either limit, so an incident can be judged by
/// where the limit stood.</remarks>
public sealed class FanOutRunAllStrategy : Strategy
{
    private readonly int? _fixed;
    private ConcurrencyLimit? _limit;
    private ConcurrencyLimit? _prepared;
    private string? _limitName;

    private FanOutRunAllStrategy(int? fixedLimit) => _fixed = fixedLimit;

    /// <summary>The library's default: a fresh <c>ConcurrencyLimit.Adaptive()</c> per run.</summary>
    public static FanOutRunAllStrategy Default() => new(null);

    /// <summary><c>ConcurrencyLimit.Fixed(<paramref name="limit"/>)</c>.</summary>
    public static FanOutRunAllStrategy Fixed(int limit)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        return new(limit);
    }

    /// <summary>The name of the default's row.</summary>
    public const string DefaultName = "FanOut (default)";

    /// <summary>The name of a <c>Fixed(<paramref name="limit"/>)</c> row.</summary>
    public static string FixedName(int limit) => $"FanOut (Fixed {limit})";

    /// <inheritdoc/>
    public override string Name => _fixed is { } n ? FixedName(n) : DefaultName;

    /// <inheritdoc/>
    public override Workloads.WorkloadForms Needs => Workloads.WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _fixed ?? new AdaptiveLimitOptions().MaxLimit);

    /// <inheritdoc/>
    public override bool LimitMoves => _fixed is null;

    /// <inheritdoc/>
    /// <remarks>Each adaptive limit is named apart (<see cref="LimitNames"/>), as its changes are told apart by name.</remarks>
    public override string? LimitName => Volatile.Read(ref _limitName);

    /// <inheritdoc/>
    public override int? LimitNow => _fixed ?? Volatile.Read(ref _limit)?.Current;

    /// <inheritdoc/>
    public override LimitReading? LastLimit => _fixed is null && _limit is { } limit ? new LimitReading(limit.Current, limit.Peak) : null;

    /// <inheritdoc/>
    /// <remarks>The fresh limit becomes <see cref="LimitNow"/> at once, so the run's first sample reads its start.</remarks>
    public override void PrepareRun()
    {
        _prepared = NewLimit();
        Volatile.Write(ref _limit, _prepared);
    }

    /// <inheritdoc/>
    public override async Task RunAsync(Workloads.Workload workload, int[] items, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(workload);
        // A fresh limit per run, as a call with no limit gets: a warm-up (no PrepareRun) makes its own.
        var limit = _prepared ?? NewLimit();
        _prepared = null;
        Volatile.Write(ref _limit, limit);
        try
        {
            // A run that ends early takes no item after its end: one run at once would read to the limit as an instant answer.
            var source = workload is Workloads.IEndsEarly ends ? items.TakeWhile(_ => !ends.Ended) : items;
            await source.FanOutAsync(workload.RunAsync, new FanOutOptions { Limit = limit, Errors = ErrorMode.RunAll }, cancellationToken).ConfigureAwait(false);
        }
        catch (FanOutException) when (!cancellationToken.IsCancellationRequested)
        {
            // Every item ran; the workload counted each failure by kind before throwing it.
        }
    }

    private ConcurrencyLimit NewLimit()
    {
        if (_fixed is { } n)
        {
            return ConcurrencyLimit.Fixed(n);
        }

        var name = LimitNames.Next();
        Volatile.Write(ref _limitName, name);
        return ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = name });
    }
}
