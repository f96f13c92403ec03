using FanOut.Lab.Measurement;
using FanOut.Lab.Results;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.ServerOverload;

/// <summary>
/// The server-overload sweep's backend and measures: a PostgreSQL started for the case when one can be (else the in-process
/// simulated dependency, with the reason in <see cref="BackendNote"/>), the load steps a <see cref="ServerOverloadStrategy"/>
/// runs against it, and the live counters the timeline reads. The requests run in the strategy's Kestrel app, not as items.
/// </summary>
public sealed class ServerOverloadWorkload : Workload, ICaseLifecycle, ILiveCounters
{
    /// <summary>Connections of the backend (its pool) at once.</summary>
    public const int BackendConcurrency = 4;

    /// <summary>One call's time in the backend: capacity = <see cref="BackendConcurrency"/> / this = 100/s.</summary>
    public static TimeSpan ServiceTime { get; } = TimeSpan.FromMilliseconds(40);

    private readonly List<LoadStepResult> _steps = [];
    private readonly OverloadLiveCounters _live;
    private PostgresServer? _postgres;
    private IOverloadBackend? _backend;
    private OverloadApp? _app;

    /// <summary>Creates the workload; nothing starts until <see cref="SetUpAsync"/>.</summary>
    /// <param name="loads">The load steps, as multiples of the backend's capacity, in order.</param>
    /// <param name="warmup">Each step's uncounted start.</param>
    /// <param name="measured">Each step's counted stretch.</param>
    /// <param name="slo">The latency within which a 200 counts as goodput.</param>
    /// <param name="usePostgres">False to use the simulated dependency even where PostgreSQL could start (tests).</param>
    public ServerOverloadWorkload(IReadOnlyList<double> loads, TimeSpan warmup, TimeSpan measured, TimeSpan slo, bool usePostgres = true)
    {
        ArgumentNullException.ThrowIfNull(loads);
        if (loads.Count == 0 || loads.Any(l => !(l > 0)))
        {
            throw new ArgumentOutOfRangeException(nameof(loads), "Every load step must be a positive multiple of capacity.");
        }

        Loads = loads;
        Warmup = warmup;
        Measured = measured;
        Slo = slo;
        UsePostgres = usePostgres;
        _live = new OverloadLiveCounters(Probe);
    }

    /// <summary>The load steps, as multiples of capacity.</summary>
    public IReadOnlyList<double> Loads { get; }

    /// <summary>Each step's uncounted start.</summary>
    public TimeSpan Warmup { get; }

    /// <summary>Each step's counted stretch.</summary>
    public TimeSpan Measured { get; }

    /// <summary>The latency within which a 200 counts as goodput.</summary>
    public TimeSpan Slo { get; }

    /// <summary>Whether set-up tries PostgreSQL first.</summary>
    public bool UsePostgres { get; }

    /// <summary>Which backend the case used and why (after set-up); null before.</summary>
    public string? BackendNote { get; private set; }

    /// <summary>The backend (after set-up).</summary>
    public IOverloadBackend Backend => _backend ?? throw new InvalidOperationException("Not set up.");

    /// <summary>The live counters a load step adds to.</summary>
    public OverloadLiveCounters Live => _live;

    /// <inheritdoc/>
    /// <remarks>Says which backend once set up (the name the result carries is read after the run).</remarks>
    public override string Name => $"GET /work, a backend of {BackendConcurrency} at once x {ServiceTime.TotalMilliseconds:0} ms, open loop at {string.Join(", ", Loads.Select(l => $"{l:0.##}x"))}{(BackendNote is null ? string.Empty : $": {BackendNote}")}";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>
    {
        ["capacityPerSecond"] = BackendConcurrency / ServiceTime.TotalSeconds,
        ["loads"] = string.Join('/', Loads.Select(l => l.ToString("0.##", System.Globalization.CultureInfo.InvariantCulture))),
        ["sloMs"] = Slo.TotalMilliseconds,
        ["stepSeconds"] = (Warmup + Measured).TotalSeconds,
    };

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override WorkProfile Profile => new([], UsesCpu: false);

    /// <inheritdoc/>
    public override double EstimateRunMs(double idealMs, int concurrency) => Loads.Count * (Warmup + Measured).TotalMilliseconds;

    /// <inheritdoc/>
    /// <value>About 3 s with PostgreSQL (initdb, start, the pool's connections), 0.4 s without.</value>
    public override double EstimateSetupMs => UsePostgres && PostgresServer.WhyNot() is null ? 3000 : 400;

    /// <summary>Requests sent over the whole sweep: the case's item count.</summary>
    public int Requests => (int)Loads.Sum(l => l * BackendConcurrency / ServiceTime.TotalSeconds * (Warmup + Measured).TotalSeconds);

    /// <summary>Answers that were a 200 within the SLO so far (goodput, not every 200).</summary>
    public long CompletedNow => _live.Good;

    /// <summary>Requests the service refused so far (503, or 429 where a row answers that).</summary>
    public long? RejectedNow => _live.Refused;

    /// <inheritdoc/>
    /// <remarks>0 between apps, never null: the runner asks once, before the run, whether the workload has a server.</remarks>
    public int? ServerInFlightNow => Volatile.Read(ref _app)?.ServingNow ?? 0;

    /// <inheritdoc/>
    public async Task SetUpAsync(CancellationToken cancellationToken)
    {
        var why = UsePostgres ? PostgresServer.WhyNot() : "the simulated dependency was asked for";
        if (why is null)
        {
            try
            {
                _postgres = await PostgresServer.StartAsync().ConfigureAwait(false);
                var postgres = new PostgresBackend(_postgres, BackendConcurrency, ServiceTime);
                _backend = postgres;
                await postgres.WarmAsync().ConfigureAwait(false);
                BackendNote = postgres.Describe;
                return;
            }
            catch (Exception e) when (e is InvalidOperationException or Npgsql.NpgsqlException or System.Net.Sockets.SocketException or IOException)
            {
                why = $"PostgreSQL did not start: {e.Message}";
                await DisposeAsync().ConfigureAwait(false);
            }
        }

        _backend = new SimulatedBackend(BackendConcurrency, ServiceTime);
        BackendNote = $"{_backend.Describe} ({why})";
    }

    /// <inheritdoc/>
    public void RunStarting()
    {
        _steps.Clear();
        _live.Reset();
    }

    /// <summary>Marks <paramref name="app"/> as the one being loaded (its handler's count is the timeline's "server serving"); null when stopped.</summary>
    internal void Serving(OverloadApp? app) => Volatile.Write(ref _app, app);

    /// <summary>Adds one step's figures (called by the strategy after each step).</summary>
    internal void Add(OverloadCell cell)
    {
        ArgumentNullException.ThrowIfNull(cell);
        _steps.Add(new LoadStepResult(
            cell.LoadFactor,
            cell.OfferedPerSecond,
            cell.Sent,
            cell.GoodputPerSecond,
            double.IsNaN(cell.P50Ms) ? null : cell.P50Ms,
            double.IsNaN(cell.P99Ms) ? null : cell.P99Ms,
            cell.RefusedShare,
            cell.FailedShare,
            cell.CriticalSuccess,
            cell.SheddableSuccess,
            cell.MeanLimit > 0 ? cell.MeanLimit : null));
    }

    /// <inheritdoc/>
    /// <remarks>The row's totals are over every step's counted stretch: goodput as successes, refusals as 503s, no answer as
    /// timeouts; latencies are per step only (<see cref="IoRunMetrics.LoadSteps"/>), a percentile across loads means nothing.</remarks>
    public IoRunMetrics RunFinished(double elapsedMs)
    {
        var seconds = Measured.TotalSeconds * _steps.Count;
        var good = (long)Math.Round(_steps.Sum(s => s.GoodputPerSecond * Measured.TotalSeconds));
        var refused = (long)Math.Round(_steps.Sum(s => s.RefusedShare * s.Sent));
        var failed = (long)Math.Round(_steps.Sum(s => s.FailedShare * s.Sent));
        return new IoRunMetrics
        {
            Successes = good,
            FailuresByStatus = new Dictionary<int, long> { [503] = refused },
            FailuresSocket = 0,
            FailuresTimeout = failed,
            FailuresOther = 0,
            SuccessesPerSecond = seconds > 0 ? good / seconds : 0,
            LoadSteps = _steps.ToArray(),
        };
    }

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        if (_backend is not null)
        {
            await _backend.DisposeAsync().ConfigureAwait(false);
            _backend = null;
        }

        if (_postgres is not null)
        {
            await _postgres.DisposeAsync().ConfigureAwait(false);
            _postgres = null;
        }
    }
}
