using System.Threading.RateLimiting;

using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary>The FanOut library: <c>items.FanOutAsync(body, new FanOutOptions { Limit = ... })</c> with a fixed or an adaptive limit.</summary>
/// <remarks>An adaptive limit is created fresh for every run, as <c>Limit = null</c> would be, but kept so the lab can
/// report where it settled (<see cref="LastLimit"/>).</remarks>
public sealed class FanOutStrategy : Strategy
{
    /// <summary>Replenishments per second of the token bucket in front (<see cref="FixedWithRate"/>): small bursts, smooth pacing.</summary>
    private const int RefillsPerSecond = 100;

    private readonly int? _fixed;
    private readonly ErrorMode _errors;
    private readonly double? _ratePerSecond;
    private readonly string? _variant;
    private readonly AdaptiveLimitOptions _adaptive = new();
    private ConcurrencyLimit? _lastLimit;
    private ConcurrencyLimit? _preparedLimit;
    private string? _limitName;

    private FanOutStrategy(int? fixedLimit, ErrorMode errors, double? ratePerSecond = null, string? variant = null)
    {
        _variant = variant;
        _fixed = fixedLimit;
        _errors = errors;
        _ratePerSecond = ratePerSecond;
    }

    /// <summary>FanOut with <c>ConcurrencyLimit.Fixed(<paramref name="limit"/>)</c>.</summary>
    /// <param name="limit">The fixed limit.</param>
    /// <param name="errors">The error mode; unlike the adaptive RunAll strategy, a fixed one lets its <see cref="FanOutException"/> reach the caller (seed000-errors observes it).</param>
    public static FanOutStrategy Fixed(int limit, ErrorMode errors = ErrorMode.FailFast) => new(CheckLimit(limit, nameof(limit)), errors);

    /// <summary>FanOut with <c>ConcurrencyLimit.Fixed(<paramref name="limit"/>)</c> and a token bucket of <paramref name="ratePerSecond"/> in <c>FanOutOptions.RateLimiter</c>.</summary>
    public static FanOutStrategy FixedWithRate(int limit, double ratePerSecond)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(ratePerSecond, 0);
        return new(CheckLimit(limit, nameof(limit)), ErrorMode.FailFast, ratePerSecond);
    }

    /// <summary>FanOut with a fresh <c>ConcurrencyLimit.Adaptive()</c> (the library's default) per run.</summary>
    /// <param name="errors">
    /// <see cref="ErrorMode.RunAll"/> for workloads that throw their failures (so the limit can back off on a 429) while
    /// counting them: every item still runs, and the run's <see cref="FanOutException"/> is expected, not a failed case.
    /// </param>
    /// <param name="variant">What sets this row apart from the plain default (its body, say), shown in its name.</param>
    public static FanOutStrategy Adaptive(ErrorMode errors = ErrorMode.FailFast, string? variant = null) => new(null, errors, variant: variant);

    /// <inheritdoc/>
    public override string Name => (_fixed, _errors) switch
    {
        ({ } limit, _) when _ratePerSecond is { } rate => $"FanOut (Fixed {limit}, {rate:N0}/s bucket)",
        ({ } limit, ErrorMode.RunAll) => $"FanOut (Fixed {limit}, RunAll)",
        ({ } limit, _) => $"FanOut (Fixed {limit})",
        (null, _) when _variant is not null => $"FanOut (default, {_variant})",
        (null, ErrorMode.RunAll) => "FanOut (adaptive, RunAll)",
        _ => "FanOut (adaptive)",
    };

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    /// <remarks>Adaptive: its maximum, the concurrency it may climb to.</remarks>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _fixed ?? _adaptive.MaxLimit);

    /// <inheritdoc/>
    public override LimitReading? LastLimit =>
        _fixed is null && _lastLimit is { } limit ? new LimitReading(limit.Current, limit.Peak) : null;

    /// <inheritdoc/>
    public override bool LimitMoves => _fixed is null;

    /// <inheritdoc/>
    /// <remarks>Each adaptive limit is named apart (<see cref="LimitNames"/>), as its changes are told apart by name.</remarks>
    public override string? LimitName => Volatile.Read(ref _limitName);

    /// <inheritdoc/>
    public override int? LimitNow => _fixed is null ? Volatile.Read(ref _lastLimit)?.Current : null;

    /// <inheritdoc/>
    public override double? PacePerSecond => _ratePerSecond;

    /// <inheritdoc/>
    /// <remarks>The fresh limit becomes <see cref="LimitNow"/> at once: the timeline's first point is its initial limit (2 by default).</remarks>
    public override void PrepareRun()
    {
        var limit = NewLimit();
        _preparedLimit = limit;
        Volatile.Write(ref _lastLimit, limit);
    }

    /// <inheritdoc/>
    /// <remarks>The library's own task is returned as it is (no await here), so a caller sees exactly what the library's
    /// task holds; only the adaptive RunAll strategy swallows its expected <see cref="FanOutException"/>.</remarks>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(workload);
        var limit = _preparedLimit ?? NewLimit();
        _preparedLimit = null;
        Volatile.Write(ref _lastLimit, limit);
        if (_ratePerSecond is { } rate)
        {
            return PacedAsync(workload, items, limit, rate, cancellationToken);
        }

        var run = items.FanOutAsync(workload.RunAsync, new FanOutOptions { Limit = limit, Errors = _errors }, cancellationToken);
        return _fixed is null && _errors == ErrorMode.RunAll ? CountedFailuresAsync(run, cancellationToken) : run;
    }

    private ConcurrencyLimit NewLimit()
    {
        if (_fixed is { } n)
        {
            return ConcurrencyLimit.Fixed(n);
        }

        var name = LimitNames.Next();
        Volatile.Write(ref _limitName, name);
        return ConcurrencyLimit.Adaptive(_adaptive with { Name = name });
    }

    private async Task PacedAsync(Workload workload, int[] items, ConcurrencyLimit limit, double ratePerSecond, CancellationToken cancellationToken)
    {
        using var bucket = TokenBucket(ratePerSecond);
        await items.FanOutAsync(workload.RunAsync, new FanOutOptions { Limit = limit, Errors = _errors, RateLimiter = bucket }, cancellationToken).ConfigureAwait(false);
    }

    private static async Task CountedFailuresAsync(Task run, CancellationToken cancellationToken)
    {
        try
        {
            await run.ConfigureAwait(false);
        }
        catch (FanOutException) when (!cancellationToken.IsCancellationRequested)
        {
            // Every item ran; the workload counted each failure by kind before throwing it.
        }
    }

    private static TokenBucketRateLimiter TokenBucket(double ratePerSecond)
    {
        var perRefill = Math.Max(1, (int)Math.Round(ratePerSecond / RefillsPerSecond));
        return new TokenBucketRateLimiter(new TokenBucketRateLimiterOptions
        {
            TokenLimit = perRefill,
            TokensPerPeriod = perRefill,
            ReplenishmentPeriod = TimeSpan.FromSeconds(perRefill / ratePerSecond),
            QueueLimit = int.MaxValue,
            AutoReplenishment = true,
        });
    }
}
