using System.Diagnostics;
using System.Net;

using FanOut.Downstream;
using FanOut.Downstream.Control;
using FanOut.Lab.Measurement;

namespace FanOut.Lab.Workloads.RealIo;

/// <summary><c>incident</c>: <c>GET /item/{i}</c> against a real <see cref="DownstreamServer"/> that goes through an
/// <see cref="IncidentScript"/> while the items run, read for how the fan-out's limit followed it.</summary>
/// <remarks>
/// <para>The script's clock starts with the run's first item; a driver applies its changes on time and samples the limit beside
/// the server's counters every <see cref="SampleEvery"/>. At the script's end the run is over (<see cref="Ended"/>): a strategy
/// stops taking items, and an item it had already taken returns at once without a call (counted as not sent), so every row
/// is judged over the same span of time, whatever its speed.</para>
/// <para>Every non-2xx answer and every call error is counted and thrown, as a body calling <c>EnsureSuccessStatusCode</c> would;
/// a 429 carrying <c>Retry-After</c> is thrown as an <see cref="OverloadedException"/> with that hint, so FanOut's adaptive
/// default backs off and runs the item again after it. An item fails for good when every attempt failed.</para>
/// </remarks>
public sealed class IncidentWorkload : Workload, ICaseLifecycle, ILiveCounters, IEndsEarly
{
    /// <summary>How often the driver applies due changes and samples the limit.</summary>
    public static readonly TimeSpan SampleEvery = TimeSpan.FromMilliseconds(5);

    private const byte Untried = 0;
    private const byte AttemptFailed = 1;
    private const byte Succeeded = 2;
    private const byte CutOff = 3;

    private readonly IncidentScript _script;
    private readonly DownstreamOptions _options;
    private readonly TimeSpan _callTimeout;
    private readonly int _itemCount;
    private readonly Func<int?> _limitNow;
    private readonly List<IncidentSample> _samples = [];
    private Uri[] _paths = [];
    private byte[] _states = [];
    private DownstreamConnection? _downstream;
    private ItemOutcomes? _outcomes;
    private Task? _driver;
    private int _started;
    private int _ended;

    /// <summary>Creates the workload; nothing starts until <see cref="SetUpAsync"/>.</summary>
    /// <param name="script">The incident; its first step (at 0 ms) is the server's state at every run's start.</param>
    /// <param name="callTimeout">HttpClient.Timeout: the longest one call may take.</param>
    /// <param name="itemCount">N: enough to outlast the script at the best rate.</param>
    /// <param name="seed">The latency sampler's seed.</param>
    /// <param name="limitNow">Reads the fan-out's limit now (the strategy's); sampled with the server's counters.</param>
    public IncidentWorkload(IncidentScript script, TimeSpan callTimeout, int itemCount, int seed, Func<int?> limitNow)
    {
        ArgumentNullException.ThrowIfNull(script);
        ArgumentNullException.ThrowIfNull(limitNow);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(callTimeout, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        if (script.Steps.Count == 0 || script.Steps[0] is not { AtMs: 0, Change: { Capacity: { } capacity, Queue: { } queue, Latency: { } latency } })
        {
            throw new ArgumentException($"The script's first step must be at 0 ms and set capacity, queue and latency; got '{script.Steps.FirstOrDefault()?.Change}'.", nameof(script));
        }

        _script = script;
        _options = new DownstreamOptions { Capacity = capacity, Queue = queue, Latency = latency, Seed = seed };
        _callTimeout = callTimeout;
        _itemCount = itemCount;
        _limitNow = limitNow;
    }

    /// <inheritdoc/>
    public override string Name => $"GET /item through '{_script.Name}'";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters
    {
        get
        {
            var parameters = new Dictionary<string, object> { [Results.IncidentFigures.PhaseKey] = _script.Name, [Results.IncidentFigures.BestFixedKey] = _script.Capacity };
            DownstreamConnection.Describe(_options, _callTimeout, parameters);
            return parameters;
        }
    }

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override WorkProfile Profile => new([], UsesCpu: false);

    /// <inheritdoc/>
    /// <remarks>A run lasts the script, whatever the strategy: items left at its end are not sent.</remarks>
    public override double EstimateRunMs(double idealMs, int concurrency) => _script.EndMs;

    /// <inheritdoc/>
    /// <value>300 ms, as <see cref="HttpGetWorkload"/>: the server's start and the first connections.</value>
    public override double EstimateSetupMs => 300;

    /// <inheritdoc/>
    public long CompletedNow => _outcomes?.SuccessesNow ?? 0;

    /// <inheritdoc/>
    public long? RejectedNow => _outcomes?.TooManyRequestsNow;

    /// <inheritdoc/>
    public int? ServerInFlightNow => _downstream?.Server.InFlightNow;

    /// <summary>The running server (after set-up), for tests.</summary>
    internal DownstreamServer Server => (_downstream ?? throw new InvalidOperationException("Not set up.")).Server;

    /// <inheritdoc/>
    /// <remarks>The per-item arrays are made here, not in the constructor: the lab also creates workloads just to read their name.</remarks>
    public async Task SetUpAsync(CancellationToken cancellationToken)
    {
        // Built once: the request path is not part of what the strategies are compared on.
        _paths = Enumerable.Range(0, _itemCount).Select(i => new Uri($"item/{i}", UriKind.Relative)).ToArray();
        _states = new byte[_itemCount];
        _samples.Capacity = (int)(_script.EndMs / SampleEvery.TotalMilliseconds) + 64;
        _outcomes = new ItemOutcomes(_itemCount);
        _downstream = new DownstreamConnection(_options, _callTimeout);
        await _downstream.StartAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    public bool Ended => Volatile.Read(ref _ended) != 0;

    /// <inheritdoc/>
    public void RunStarting()
    {
        Outcomes.Reset();
        Array.Clear(_states);
        _samples.Clear();
        _driver = null;
        Volatile.Write(ref _ended, 0);
        Volatile.Write(ref _started, 0);
        Server.Apply(_script.Steps[0].Change with { RetryAfterStorm = TimeSpan.Zero });
        _downstream!.RunStarting();
    }

    /// <inheritdoc/>
    public IoRunMetrics RunFinished(double elapsedMs)
    {
        // The driver ends at the script's end, which the run has reached unless it ran out of items first.
        _driver?.GetAwaiter().GetResult();
        var metrics = _downstream!.ServerMetrics(Outcomes.Collect(elapsedMs));
        var failed = _states.Count(s => s == AttemptFailed);
        if (_samples.Count > 0)
        {
            // The script's last sample stands for its end, with the limit read after the run (the strategy's final limit, which
            // calls still in flight at the script's end may have moved): "stayed within the band to the end" includes it.
            var last = _samples[^1];
            _samples[^1] = last with { Ms = Math.Max(_script.EndMs, _samples.Count > 1 ? _samples[^2].Ms : 0), Limit = _limitNow() ?? last.Limit };
        }

        var reading = IncidentReading.Read(_samples, _script.ChangeMs, _script.SettleFromMs, _script.EndMs, IncidentScript.BandLow * _script.Capacity, IncidentScript.BandHigh * _script.Capacity);
        return metrics with
        {
            ItemsFailed = failed,
            ItemsNotSent = _states.Count(s => s is Untried or CutOff), // never taken, or taken after the end
            PhaseSuccessesPerSecond = reading?.SuccessesPerSecond,
            ConvergenceMs = reading?.SettleMs,
            BudgetLowAfterConvergence = reading?.LimitLow,
            BudgetHighAfterConvergence = reading?.LimitHigh,
            Rejected429AfterConvergence = reading?.RejectedAfterSettling,
            CallsAfterConvergence = reading?.AnsweredAfterSettling,
            LimitAtChange = reading?.LimitAtChange,
            LimitAtEnd = reading?.LimitAtEnd,
            PauseRejected = reading?.PauseRejected,
        };
    }

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        if (_driver is { } driver)
        {
            await driver.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        if (_downstream is not null)
        {
            await _downstream.DisposeAsync().ConfigureAwait(false);
            _downstream = null;
        }
    }

    /// <inheritdoc/>
    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        if (Ended)
        {
            // The script is over: not sent. An item waiting to run again after a rejection is cut off, not failed.
            _states[index] = _states[index] == AttemptFailed ? CutOff : _states[index];
            return;
        }

        if (Interlocked.CompareExchange(ref _started, 1, 0) == 0)
        {
            _driver = DriveAsync(Stopwatch.GetTimestamp());
        }

        using var scope = Probe.Enter();
        var outcomes = Outcomes;
        var started = Stopwatch.GetTimestamp();
        try
        {
            using var response = await _downstream!.Client.GetAsync(_paths[index], cancellationToken).ConfigureAwait(false);
            if (response.IsSuccessStatusCode)
            {
                outcomes.Succeeded(index, started);
                _states[index] = Succeeded;
                return;
            }

            outcomes.FailedWithStatus((int)response.StatusCode);
            _states[index] = AttemptFailed;
            var message = $"{(int)response.StatusCode} from {_paths[index]}";
            if (response.StatusCode == HttpStatusCode.TooManyRequests && response.Headers.RetryAfter?.Delta is { } retryAfter)
            {
                throw new OverloadedException(message, retryAfter);
            }

            throw new HttpRequestException(HttpRequestError.Unknown, message, statusCode: response.StatusCode);
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested && ex is not OutOfMemoryException and not OverloadedException and not HttpRequestException { StatusCode: not null })
        {
            outcomes.Failed(ex);
            _states[index] = AttemptFailed;
            throw;
        }
    }

    /// <summary>Applies the script's changes on time and samples the limit with the server's counters, until the script's end.</summary>
    private async Task DriveAsync(long startTimestamp)
    {
        var server = Server;
        var steps = _script.Steps;
        var next = 1;
        using var timer = new PeriodicTimer(SampleEvery);
        while (true)
        {
            var ms = Stopwatch.GetElapsedTime(startTimestamp).TotalMilliseconds;
            for (; next < steps.Count && steps[next].AtMs <= ms; next++)
            {
                server.Apply(steps[next].Change);
            }

            var stats = server.GetStats();
            _samples.Add(new IncidentSample(ms, _limitNow() ?? 0, stats.RequestsServed + stats.Rejected429, stats.Rejected429, Outcomes.SuccessesNow));
            if (ms >= _script.EndMs)
            {
                Volatile.Write(ref _ended, 1);
                return;
            }

            await timer.WaitForNextTickAsync().ConfigureAwait(false);
        }
    }

    private ItemOutcomes Outcomes => _outcomes ?? throw new InvalidOperationException($"{Name} runs only between SetUpAsync and DisposeAsync.");
}
