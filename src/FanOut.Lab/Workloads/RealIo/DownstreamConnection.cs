using System.Diagnostics;

using FanOut.Downstream;
using FanOut.Lab.Measurement;

namespace FanOut.Lab.Workloads.RealIo;

/// <summary>One case's downstream: a <see cref="DownstreamServer"/> on loopback and the one shared <see cref="HttpClient"/> that calls it.</summary>
/// <remarks>
/// The client's <see cref="SocketsHttpHandler"/> keeps its defaults (<c>MaxConnectionsPerServer</c> unlimited), so the
/// strategy alone decides how many requests the server sees. A crashed server (crash-after-K) is replaced by a
/// fresh one before the next run, on a new port, with a new client.
/// </remarks>
internal sealed class DownstreamConnection(DownstreamOptions options, TimeSpan callTimeout) : IAsyncDisposable
{
    /// <summary>
    /// Makes the client from the server's base address and the call timeout, with what to dispose after it (a service
    /// provider whose IHttpClientFactory made it); null for the plain client over a <see cref="SocketsHttpHandler"/>.
    /// </summary>
    public Func<Uri, TimeSpan, (HttpClient Client, IDisposable? Owner)>? CreateClient { get; init; }

    private IDisposable? _clientOwner;

    /// <summary>How long <see cref="ServerMetrics"/> waits for the server to finish counting requests the client has already seen end.</summary>
    private static readonly TimeSpan s_settleTime = TimeSpan.FromSeconds(1);

    private DownstreamServer? _server;
    private HttpClient? _client;

    /// <summary><see cref="SocketsHttpHandler.MaxConnectionsPerServer"/> as .NET sets it by default.</summary>
    public static int DefaultMaxConnectionsPerServer { get; } = ReadDefaultMaxConnections();

    /// <summary>The client; valid after <see cref="StartAsync"/>.</summary>
    public HttpClient Client => _client ?? throw new InvalidOperationException("The downstream has not been started.");

    /// <summary>The server; valid after <see cref="StartAsync"/>.</summary>
    public DownstreamServer Server => _server ?? throw new InvalidOperationException("The downstream has not been started.");

    /// <summary>The parameters describing the downstream, for results.json.</summary>
    public static void Describe(DownstreamOptions options, TimeSpan callTimeout, IDictionary<string, object> parameters)
    {
        ArgumentNullException.ThrowIfNull(options);
        parameters["capacity"] = options.Capacity;
        parameters["queue"] = options.Queue;
        if (options.RatePerSecond is { } rate)
        {
            parameters["ratePerSecond"] = rate;
        }

        if (options.CrashAfterRequests is { } k)
        {
            parameters["crashAfter"] = k;
        }

        parameters["latency"] = options.Latency.ToString();
        parameters["timeoutMs"] = (int)callTimeout.TotalMilliseconds;
        parameters["maxConnectionsPerServer"] = DefaultMaxConnectionsPerServer == int.MaxValue ? "unlimited" : DefaultMaxConnectionsPerServer;
    }

    /// <summary>For the duration estimate: the calls the server serves at once for a strategy with <paramref name="concurrency"/>
    /// in flight (at most its capacity, at least one); a run is waves of that many.</summary>
    public static int CallsPerWave(DownstreamOptions options, int concurrency)
    {
        ArgumentNullException.ThrowIfNull(options);
        return Math.Max(1, Math.Min(concurrency, options.Capacity));
    }

    /// <summary>Starts the server and creates the client.</summary>
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        _server = await DownstreamServer.StartAsync(options, cancellationToken).ConfigureAwait(false);
        if (CreateClient is not null)
        {
            (_client, _clientOwner) = CreateClient(_server.BaseAddress, callTimeout);
            return;
        }

        _client = new HttpClient(new SocketsHttpHandler(), disposeHandler: true)
        {
            BaseAddress = _server.BaseAddress,
            Timeout = callTimeout,
        };
    }

    /// <summary>Before a run: a crashed server is replaced; the counters are zeroed.</summary>
    public void RunStarting()
    {
        if (Server.HasCrashed)
        {
            StopAsync().AsTask().GetAwaiter().GetResult();
            StartAsync(CancellationToken.None).GetAwaiter().GetResult();
        }

        Server.ResetStats();
    }

    /// <summary>Adds the server's view of the run to <paramref name="metrics"/>.</summary>
    public IoRunMetrics ServerMetrics(IoRunMetrics metrics)
    {
        // A client can read an answer a moment before the server's handler counts it as served: wait (briefly, bounded) until nothing is in progress.
        var started = Stopwatch.GetTimestamp();
        var stats = Server.GetStats();
        while (!Server.HasCrashed && (stats.InFlight > 0 || stats.Queued > 0) && Stopwatch.GetElapsedTime(started) < s_settleTime)
        {
            Thread.Sleep(5);
            stats = Server.GetStats();
        }

        return metrics with
        {
            PeakConcurrentServed = stats.PeakConcurrentServed,
            PeakAtGate = stats.PeakAtGate,
            Rejected429 = stats.Rejected429,
            RequestsServed = stats.RequestsServed,
        };
    }

    /// <summary>Stops the server and disposes the client.</summary>
    public async ValueTask DisposeAsync() => await StopAsync().ConfigureAwait(false);

    private async ValueTask StopAsync()
    {
        _client?.Dispose();
        _client = null;
        _clientOwner?.Dispose();
        _clientOwner = null;
        if (_server is not null)
        {
            await _server.DisposeAsync().ConfigureAwait(false);
            _server = null;
        }
    }

    private static int ReadDefaultMaxConnections()
    {
        using var handler = new SocketsHttpHandler();
        return handler.MaxConnectionsPerServer;
    }
}
