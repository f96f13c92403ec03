using System.Diagnostics;
using System.Net;

using FanOut.Downstream;
using FanOut.Lab.Measurement;

namespace FanOut.Lab.Workloads.RealIo;

/// <summary><c>http-get</c>: one <c>GET /item/{i}</c> per item against a real <see cref="DownstreamServer"/> on loopback, through one shared HttpClient.</summary>
/// <remarks>
/// Every call has a timeout. A failed call (non-2xx status, socket error, timeout, anything else) is counted by
/// kind and does not throw out of the body, so every strategy runs every item and the counts are complete; only
/// the run's own cancellation propagates.
/// </remarks>
public sealed class HttpGetWorkload : Workload, ICaseLifecycle, ILiveCounters
{
    private readonly DownstreamOptions _options;
    private readonly TimeSpan _callTimeout;
    private readonly int _itemCount;
    private readonly Uri[] _paths;
    private DownstreamConnection? _downstream;
    private ItemOutcomes? _outcomes;

    /// <summary>Creates the workload; nothing starts until <see cref="SetUpAsync"/>.</summary>
    /// <param name="options">The server each case starts.</param>
    /// <param name="callTimeout">HttpClient.Timeout: the longest one call may take.</param>
    /// <param name="itemCount">N.</param>
    public HttpGetWorkload(DownstreamOptions options, TimeSpan callTimeout, int itemCount)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(callTimeout, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        _options = options;
        _callTimeout = callTimeout;
        _itemCount = itemCount;

        // Built once: the request path is not part of what the strategies are compared on.
        _paths = Enumerable.Range(0, itemCount).Select(i => new Uri($"item/{i}", UriKind.Relative)).ToArray();
    }

    /// <inheritdoc/>
    /// <summary>
    /// When true, a failed call is counted and then thrown (a non-2xx answer as an <see cref="HttpRequestException"/>
    /// with its status code, as <c>EnsureSuccessStatusCode</c> would), so a strategy that reacts to failures, such as
    /// FanOut's adaptive limit backing off on a 429, sees them. The counts stay complete either way.
    /// </summary>
    public bool ThrowOnFailure { get; init; }

    /// <summary>
    /// When true, an overload answer (429 or 503) is counted and then thrown as an <see cref="HttpRequestException"/> with
    /// its status code, which is what FanOut's default needs to back off and run the item again; every other failure is
    /// only counted. This is how a user's body
    /// that calls <c>EnsureSuccessStatusCode</c> on overload answers looks to the library.
    /// </summary>
    public bool ThrowOnOverload { get; init; }

    /// <summary>
    /// Makes the case's client (from the server's base address and the call timeout) with what to dispose after it, for a
    /// scenario that calls through a handler pipeline of its own (IHttpClientFactory with FanOut.Http's limit); null for the
    /// plain client.
    /// </summary>
    internal Func<Uri, TimeSpan, (HttpClient Client, IDisposable? Owner)>? CreateClient { get; init; }

    /// <summary>The server's address (after set-up): what a per-host limit is keyed by.</summary>
    internal Uri BaseAddress => Server.BaseAddress;

    public override string Name => $"GET /item ({_options.Latency})";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters
    {
        get
        {
            var parameters = new Dictionary<string, object>();
            DownstreamConnection.Describe(_options, _callTimeout, parameters);
            if (ThrowOnFailure)
            {
                parameters["throwOnFailure"] = true;
            }

            if (ThrowOnOverload)
            {
                parameters["throwOnOverload"] = true;
            }

            return parameters;
        }
    }

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    /// <remarks>No fixed wait per item: the server's latency is a distribution and its queue adds to it, so the ideal-time
    /// model gets nothing to work with and the efficiency column is not meaningful here; the I/O columns are.</remarks>
    public override WorkProfile Profile => new([], UsesCpu: false);

    /// <inheritdoc/>
    /// <remarks>The cost model holds no server: a run is taken as waves of the server's mean latency (a slot serves 1000 / mean
    /// calls a second; a log-normal's mean is 1.2x its median at p99 = 4 x median), each wave as many calls
    /// as the server serves at once (fewer when the strategy sends fewer), plus what every call costs the client and the
    /// server on the same machine (<see cref="LoopbackCallsPerSecond"/>). Calls the server refuses come back at once and
    /// take no wave: those past capacity plus queue when everything is sent together, those after a crash, and those past
    /// a rate limit when the strategy asks for more than the rate and counts the 429s (the run then ends when every item has
    /// been tried once). A run that asks for no more than the rate, or whose body throws each 429 for the limit to back off
    /// and run the item again, is paced by the rate: every call waits its token.</remarks>
    public override double EstimateRunMs(double idealMs, int concurrency)
    {
        var latencyMs = _options.Latency.MeanMilliseconds;
        var perWave = DownstreamConnection.CallsPerWave(_options, concurrency);
        var served = concurrency >= _itemCount ? Math.Min(_itemCount, _options.Capacity + _options.Queue) : _itemCount;
        if (_options.CrashAfterRequests is { } crashAfter)
        {
            served = (int)Math.Min(served, crashAfter);
        }

        var callsMs = _itemCount / LoopbackCallsPerSecond * 1000;
        var wavesMs = (Math.Ceiling(served / (double)perWave) * latencyMs) + callsMs;
        if (_options.RatePerSecond is not { } rate)
        {
            return Math.Max(idealMs, wavesMs);
        }

        var askedPerSecond = perWave * 1000 / Math.Max(latencyMs, 0.001);
        return askedPerSecond <= rate || ThrowOnOverload
            ? Math.Max(idealMs, Math.Max(wavesMs, served / rate * 1000))
            : Math.Max(idealMs, latencyMs + (_itemCount / RefusalsPerSecond * 1000));
    }

    /// <inheritdoc/>
    /// <value>300 ms: the server's start and the first run's connections (a run's first of ~100 ms more than the rest; an
    /// HTTP case took 0.3-0.5 s more than its runs and a child's start-up on the Intel Xeon 2-core VM, in
    /// downstream-capacity, downstream-rate-limit and downstream-crash).</value>
    public override double EstimateSetupMs => 300;

    /// <summary>For the estimate only: loopback calls per second that a run gets through besides its waits, client and server
    /// sharing the machine; every served call costs its share. Measured on the 2-core VM: 500 calls of a 5 ms median in
    /// waves of 50 took ~104 ms a run where the waves alone are 50 ms.</summary>
    internal const double LoopbackCallsPerSecond = 10_000;

    /// <summary>For the estimate only: calls per second that come back refused at once (a 429 past a rate limit). Measured on
    /// the 2-core VM: downstream-rate-limit's bursts tried 2,000 items in ~80 ms a run on a quiet day, in 105-145 ms on a
    /// freshly started VM (runs of 130-167 ms with the 24 ms wave).</summary>
    internal const double RefusalsPerSecond = 18_000;

    /// <summary>The running server (after set-up), for tests.</summary>
    internal DownstreamServer Server => (_downstream ?? throw new InvalidOperationException("Not set up.")).Server;

    /// <inheritdoc/>
    public long CompletedNow => _outcomes?.SuccessesNow ?? 0;

    /// <inheritdoc/>
    public long? RejectedNow => _outcomes?.TooManyRequestsNow;

    /// <inheritdoc/>
    public int? ServerInFlightNow => _downstream?.Server.InFlightNow;

    /// <inheritdoc/>
    public async Task SetUpAsync(CancellationToken cancellationToken)
    {
        _outcomes = new ItemOutcomes(_itemCount);
        _downstream = new DownstreamConnection(_options, _callTimeout) { CreateClient = CreateClient };
        await _downstream.StartAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc/>
    public void RunStarting()
    {
        Outcomes.Reset();
        _downstream!.RunStarting();
    }

    /// <inheritdoc/>
    public IoRunMetrics RunFinished(double elapsedMs) => _downstream!.ServerMetrics(Outcomes.Collect(elapsedMs));

    /// <inheritdoc/>
    public async ValueTask DisposeAsync()
    {
        if (_downstream is not null)
        {
            await _downstream.DisposeAsync().ConfigureAwait(false);
            _downstream = null;
        }
    }

    /// <inheritdoc/>
    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        using var scope = Probe.Enter();
        var outcomes = Outcomes;
        var started = Stopwatch.GetTimestamp();
        try
        {
            using var response = await _downstream!.Client.GetAsync(_paths[index], cancellationToken).ConfigureAwait(false);
            if (response.IsSuccessStatusCode)
            {
                outcomes.Succeeded(index, started);
            }
            else
            {
                outcomes.FailedWithStatus((int)response.StatusCode);
                var overload = response.StatusCode is HttpStatusCode.TooManyRequests or HttpStatusCode.ServiceUnavailable;
                if (ThrowOnFailure || (ThrowOnOverload && overload))
                {
                    // The server's Retry-After is whole seconds (at least 1) while its bucket refills in milliseconds, so
                    // it is not passed on: FanOut's own jittered backoff retries sooner, and the limit backs off anyway.
                    throw new HttpRequestException(HttpRequestError.Unknown, $"{(int)response.StatusCode} from {_paths[index]}", statusCode: response.StatusCode);
                }
            }
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested && ex is not OutOfMemoryException and not HttpRequestException { StatusCode: not null })
        {
            outcomes.Failed(ex);
            if (ThrowOnFailure)
            {
                throw;
            }
        }
    }

    private ItemOutcomes Outcomes => _outcomes ?? throw new InvalidOperationException($"{Name} runs only between SetUpAsync and DisposeAsync.");
}
