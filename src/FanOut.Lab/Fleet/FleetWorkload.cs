using FanOut.Downstream;
using FanOut.Lab.Measurement;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;
using FanOut.Redis.FleetWorker;

namespace FanOut.Lab.Fleet;

/// <summary>
/// <c>GET /item/{i}</c> against one <see cref="DownstreamServer"/>, called by several worker processes (<see cref="FleetStrategy"/>),
/// with a private redis-server when the workers share a Redis limit. The items run in the workers, not in this process.
/// </summary>
public sealed class FleetWorkload : Workload, ICaseLifecycle
{
    private readonly DownstreamOptions _options;
    private readonly int _workers;
    private readonly bool _needsRedis;
    private readonly bool _halveCapacity;
    private FleetBudgetTrace? _trace;
    private FleetTraceSummary? _summary;
    private readonly List<WorkerReport> _reports = [];
    private DownstreamServer? _server;
    private LabTempFolder? _folder;
    private LocalRedisServer? _redis;

    /// <summary>Creates the workload; nothing starts until <see cref="SetUpAsync"/>.</summary>
    /// <param name="options">The server the case starts.</param>
    /// <param name="workers">K, the worker processes.</param>
    /// <param name="needsRedis">True to start a private redis-server for a shared limit.</param>
    /// <param name="halveCapacity">True to halve the server's capacity once half the items were served (an adaptive fleet must follow it down).</param>
    public FleetWorkload(DownstreamOptions options, int workers, bool needsRedis, bool halveCapacity = false)
    {
        _halveCapacity = halveCapacity;
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(workers, 1);
        _options = options;
        _workers = workers;
        _needsRedis = needsRedis;
    }

    /// <inheritdoc/>
    public override string Name => $"GET /item ({_options.Latency}) from {_workers} processes";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>
    {
        ["capacity"] = _options.Capacity,
        ["queue"] = _options.Queue,
        ["latency"] = _options.Latency.ToString(),
        ["workers"] = _workers,
    };

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override WorkProfile Profile => new([], UsesCpu: false);

    /// <summary>The server's address (after set-up).</summary>
    public Uri ServerAddress => (_server ?? throw new InvalidOperationException("Not set up.")).BaseAddress;

    /// <summary>The private Redis's endpoint, or null when the case needs none.</summary>
    public string? RedisEndpoint => _redis?.Endpoint;

    /// <summary>K, the worker processes.</summary>
    public int Workers => _workers;

    /// <inheritdoc/>
    public async Task SetUpAsync(CancellationToken cancellationToken)
    {
        _server = await DownstreamServer.StartAsync(_options, cancellationToken).ConfigureAwait(false);
        if (_needsRedis)
        {
            _folder = LabTempFolder.Create("redis");
            _redis = await LocalRedisServer.StartAsync(_folder.Path).ConfigureAwait(false);
        }
    }

    /// <inheritdoc/>
    public void RunStarting()
    {
        _reports.Clear();
        _summary = null;
        _server!.SetCapacity(_options.Capacity);
        _server.ResetStats();
    }

    /// <summary>
    /// Marks <paramref name="key"/> as a key the private Redis has served before, so the fleet's first leases are not held to
    /// the restart grace a client new to a freshly started server gives (one lease time: docs/redis-limit.md). The lab's
    /// server is new for the case, not restarted under a fleet, so there is nothing to wait out.
    /// </summary>
    internal async Task MarkKeyUsedAsync(string key)
    {
        if (RedisEndpoint is not { } endpoint)
        {
            return;
        }

        await using var redis = await StackExchange.Redis.ConnectionMultiplexer.ConnectAsync(endpoint).ConfigureAwait(false);
        await redis.GetDatabase().StringSetAsync($"fanout:{{{key}}}:epoch", "lab").ConfigureAwait(false);
    }

    /// <summary>Starts sampling an adaptive fleet's budget under <paramref name="key"/> (and halving the capacity when asked), just before the workers start.</summary>
    internal async Task StartTraceAsync(string key, int items) =>
        _trace = await FleetBudgetTrace.StartAsync(RedisEndpoint ?? throw new InvalidOperationException("An adaptive fleet needs the case's redis-server."), key, _server!, items, _halveCapacity).ConfigureAwait(false);

    /// <summary>Stops sampling once every worker reported.</summary>
    internal async Task StopTraceAsync()
    {
        if (_trace is { } trace)
        {
            _trace = null;
            _summary = await trace.StopAsync().ConfigureAwait(false);
            await trace.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Adds one worker's report (called by <see cref="FleetStrategy"/> as each worker exits).</summary>
    public void Add(WorkerReport report)
    {
        ArgumentNullException.ThrowIfNull(report);
        lock (_reports)
        {
            _reports.Add(report);
        }
    }

    /// <inheritdoc/>
    /// <remarks>Throughput is over the slowest worker's own fan-out time, so the workers' process start-up is not in it.</remarks>
    public IoRunMetrics RunFinished(double elapsedMs)
    {
        var ok = _reports.Sum(r => r.Ok);
        var items = _reports.Sum(r => r.Ok + r.Status429 + r.Failed);
        var seconds = _reports.Count == 0 ? elapsedMs / 1000 : _reports.Max(r => r.ElapsedMs) / 1000;
        var stats = _server!.GetStats();
        return new IoRunMetrics
        {
            Successes = ok,
            FailuresByStatus = new Dictionary<int, long> { [StatusCodes429] = _reports.Sum(r => r.Status429) },
            FailuresSocket = 0,
            FailuresTimeout = 0,
            FailuresOther = _reports.Sum(r => r.Failed),
            SuccessesPerSecond = seconds > 0 ? ok / seconds : 0,
            PeakConcurrentServed = stats.PeakConcurrentServed,
            PeakAtGate = stats.PeakAtGate,
            Rejected429 = stats.Rejected429,
            RequestsServed = stats.RequestsServed,
            PermitWaitMsPerItem = _needsRedis && items > 0 ? _reports.Sum(r => r.PermitWaitMs) / items : null,
            RoundTripsPerItem = _needsRedis && items > 0 ? (double)_reports.Sum(r => r.RoundTrips) / items : null,
            ConvergenceMs = _summary?.ConvergenceMs,
            BudgetLowAfterConvergence = _summary?.BudgetLow,
            BudgetHighAfterConvergence = _summary?.BudgetHigh,
            Rejected429AfterConvergence = _summary?.Rejected429,
            CallsAfterConvergence = _summary?.Calls,
        };
    }

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        await StopTraceAsync().ConfigureAwait(false);
        if (_redis is not null)
        {
            await _redis.DisposeAsync().ConfigureAwait(false);
            _redis = null;
        }

        _folder?.Dispose();
        _folder = null;
        if (_server is not null)
        {
            await _server.DisposeAsync().ConfigureAwait(false);
            _server = null;
        }
    }

    /// <inheritdoc/>
    public override ValueTask RunAsync(int index, CancellationToken cancellationToken) =>
        throw new NotSupportedException($"{Name} runs its items in worker processes started by {nameof(FleetStrategy)}.");

    private const int StatusCodes429 = 429;
}
