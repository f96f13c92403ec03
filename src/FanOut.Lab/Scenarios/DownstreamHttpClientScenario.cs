using System.Globalization;

using FanOut.Downstream;
using FanOut.Http;
using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;

using Microsoft.Extensions.DependencyInjection;

namespace FanOut.Lab.Scenarios;

/// <summary>
/// Plain HttpClient calls, no FanOut loop: <c>Task.WhenAll</c> of 2,000 GETs through a client from IHttpClientFactory with
/// FanOut.Http's <c>AddFanOutLimit()</c>, against a server that serves 16 at once and queues none, beside the same calls
/// under a hand-picked <c>Fixed(16)</c> and with no limit at all.
/// </summary>
public sealed class DownstreamHttpClientScenario : Scenario
{
    private const int Items = 2000;
    private const int Capacity = 16;
    private const int Queue = 0;

    /// <summary>The adaptive row's throughput must be at least this share of the hand-picked Fixed(16) row's (issue 20).</summary>
    public const double ThroughputGoal = 0.9;

    /// <summary>The row of the default: an adaptive limit per host, told nothing about the server.</summary>
    public const string AdaptiveRow = "HttpClient + AddFanOutLimit() (adaptive)";

    /// <summary>The hand-picked row: the server's capacity, known in advance.</summary>
    public static readonly string FixedRow = $"HttpClient + AddFanOutLimit(Fixed({Capacity}))";

    /// <inheritdoc/>
    public override string Id => "downstream-http-client";

    /// <inheritdoc/>
    public override string Purpose => "Plain HttpClient calls limited by FanOut.Http's handler (AddFanOutLimit), no loop";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Pick the concurrency you can afford, then choose the API that enforces it; an unbounded Task.WhenAll over a large list \"is a denial-of-service attack on your own downstream service\".",
        "the seed fans out with a loop; most .NET fan-outs are HttpClient calls, which no loop limits");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"Task.WhenAll of {DownstreamCases.Items(size, Items, 256)} x GET /item through IHttpClientFactory, no FanOut loop, against {DownstreamCases.Describe(Server(size))}";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var items = DownstreamCases.Items(size, Items, 256);
        var server = Server(size);
        var adaptive = new HttpClientCallsStrategy(AdaptiveRow, reportsLimit: true);
        var hand = new HttpClientCallsStrategy(FixedRow, reportsLimit: false);
        return
        [
            new(new WhenAllStrategy(), () => new HttpGetWorkload(server, DownstreamCases.CallTimeout, items), items, Policy: DownstreamCases.Quick),
            new(hand, () => hand.Workload(server, items, new HostConcurrencyLimits(new FanOutHttpOptions { LimitFactory = _ => ConcurrencyLimit.Fixed(Capacity) })), items, Policy: DownstreamCases.Quick),
            new(adaptive, () => adaptive.Workload(server, items, new HostConcurrencyLimits()), items, Policy: DownstreamCases.Quick),
        ];
    }

    /// <summary>The throughput ratio as the verdict prints it: rounded down to hundredths, so that 0.899 never reads "0.90x, below 0.9x".</summary>
    internal static double ShownRatio(double ratio) => Math.Floor(ratio * 100) / 100;

    /// <summary>Lognormal latency, median 10 ms and p99 40 ms (scaled): 2,000 calls at 16 take ~1.5 s a run.</summary>
    private static DownstreamOptions Server(ScenarioSize size) => DownstreamCases.Server(size, Capacity, Queue, 10, 40);

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var adaptive = Find.Case(measured, AdaptiveRow);
        var hand = Find.Case(measured, FixedRow);
        if (adaptive?.Io is null || hand?.Io is null || hand.Io.SuccessesPerSecond <= 0)
        {
            return "Not enough cases finished to compare the handler's limit with a hand-picked one.";
        }

        var ratio = ShownRatio(adaptive.Io.SuccessesPerSecond / hand.Io.SuccessesPerSecond);
        var calls = adaptive.Io.Successes + adaptive.Io.Failures;
        var every = adaptive.Io.Failures == 0 ? $"every one of {calls:N0} calls succeeded" : $"{adaptive.Io.Failures:N0} of {calls:N0} calls failed";
        var goal = ratio >= ThroughputGoal ? $"at least the {ThroughputGoal:0.0}x goal" : $"BELOW the {ThroughputGoal:0.0}x goal";
        var settled = adaptive.LimitFinal is { } final ? $"; its limit ended at {final:N0} (peak {adaptive.LimitPeak ?? final:N0})" : string.Empty;
        var verdict = $"Plain HttpClient calls through AddFanOutLimit(), with no loop and told nothing about the server: {every} ({DownstreamCases.Outcome(adaptive)}), " +
            $"{DownstreamCases.Rate(adaptive)}, {ratio:0.00}x the hand-picked Fixed({Capacity})'s {DownstreamCases.Rate(hand)} ({DownstreamCases.Outcome(hand)}), {goal}{settled}. " +
            $"The server serves {Capacity} at once and queues {Queue}";
        if (Find.Case(measured, "Task.WhenAll") is { Io: not null } whenAll)
        {
            verdict += $"; the same calls with no limit got {DownstreamCases.Outcome(whenAll)}";
        }

        return verdict + ".";
    }

    /// <summary><c>Task.WhenAll</c> of plain HttpClient calls through FanOut.Http's handler.</summary>
    /// <param name="name">The row's name.</param>
    /// <param name="reportsLimit">
    /// True for the adaptive row: it reports where the host's limit settled, which marks it as FanOut's default in the
    /// report (<see cref="DefaultLimitVerdict"/>); the hand-picked row does not.
    /// </param>
    internal sealed class HttpClientCallsStrategy(string name, bool reportsLimit) : Strategy
    {
        /// <summary>
        /// A run's real time over the waves model, on the 2-core VM: Fixed(16) 1,841 ms and the adaptive row 2,053 ms where
        /// the model says 1,694 ms (2,000 calls in waves of 16 x the latency's 11.95 ms mean, and the calls' own 200 ms at
        /// <see cref="Workloads.RealIo.HttpGetWorkload.LoopbackCallsPerSecond"/>): the handler's own cost per wave.
        /// </summary>
        internal const double MeasuredOverWaves = 1.15;

        private HostConcurrencyLimits? _limits;
        private ConcurrencyLimit? _limit;
        private string? _limitName;
        private HttpGetWorkload? _workload;
        private LimitReading? _last;

        /// <inheritdoc/>
        public override string Name => name;

        /// <inheritdoc/>
        public override WorkloadForms Needs => WorkloadForms.Asynchronous;

        /// <inheritdoc/>
        public override int ConcurrencyFor(int itemCount) => itemCount;

        /// <inheritdoc/>
        public override LimitReading? LastLimit => reportsLimit ? _last : null;

        /// <inheritdoc/>
        public override bool LimitMoves => reportsLimit;

        /// <inheritdoc/>
        public override int? LimitNow => reportsLimit ? Volatile.Read(ref _limit)?.Current : null;

        /// <inheritdoc/>
        /// <remarks>The host's default limit, named by FanOut.Http after the host (<c>http:127.0.0.1:port</c>): one limit for
        /// the whole case, so a run's decisions start where the run before left it.</remarks>
        public override string? LimitName => reportsLimit ? Volatile.Read(ref _limitName) : null;

        /// <inheritdoc/>
        /// <remarks>The case's server is up by now: its address names the host's limit.</remarks>
        public override void PrepareRun()
        {
            if (reportsLimit && _workload is { } http)
            {
                Volatile.Write(ref _limitName, string.Create(CultureInfo.InvariantCulture, $"http:{http.BaseAddress.IdnHost}:{http.BaseAddress.Port}"));
            }
        }

        /// <inheritdoc/>
        /// <remarks>
        /// Every call is started at once, but the handler lets the server's capacity through: waves of that many, each of the
        /// latency's mean, plus the handler's own cost per wave: <see cref="MeasuredOverWaves"/>, measured.
        /// </remarks>
        public override double EstimateRunMs(double runMs, Workload workload)
        {
            ArgumentNullException.ThrowIfNull(workload);
            return workload.EstimateRunMs(runMs, Capacity) * MeasuredOverWaves;
        }

        /// <summary>The case's workload: GETs through a client from IHttpClientFactory whose pipeline holds <paramref name="limits"/>.</summary>
        public HttpGetWorkload Workload(DownstreamOptions server, int items, HostConcurrencyLimits limits)
        {
            _limits = limits;
            _limit = null;
            _limitName = null;
            _last = null;
            _workload = new HttpGetWorkload(server, DownstreamCases.CallTimeout, items)
            {
                CreateClient = (baseAddress, timeout) =>
                {
                    var services = new ServiceCollection();
                    services.AddHttpClient("downstream", c =>
                        {
                            c.BaseAddress = baseAddress;
                            c.Timeout = timeout;
                        })
                        .ConfigurePrimaryHttpMessageHandler(() => new SocketsHttpHandler())
                        .AddFanOutLimit(limits);
                    var provider = services.BuildServiceProvider();
                    return (provider.GetRequiredService<IHttpClientFactory>().CreateClient("downstream"), provider);
                },
            };
            return _workload;
        }

        /// <inheritdoc/>
        public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
        {
            ArgumentNullException.ThrowIfNull(workload);
            ArgumentNullException.ThrowIfNull(items);
            if (_limits is not null && workload is HttpGetWorkload http)
            {
                Volatile.Write(ref _limit, _limits.GetLimit(http.BaseAddress));
            }

            await Task.WhenAll(items.Select(item => workload.RunAsync(item, cancellationToken).AsTask())).ConfigureAwait(false);
            if (_limit is { } limit)
            {
                _last = new LimitReading(limit.Current, limit.Peak);
            }
        }
    }
}
