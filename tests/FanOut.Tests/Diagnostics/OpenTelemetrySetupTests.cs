using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;

using FanOut.Diagnostics;
using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.DependencyInjection;

using OpenTelemetry.Metrics;
using OpenTelemetry.Trace;

namespace FanOut.Tests.Diagnostics;

/// <summary>
/// Issue 39 item 2: docs/opentelemetry.md's setup (<c>AddMeter("FanOut")</c>, <c>AddSource("FanOut")</c>) run for real with
/// the in-memory exporter, and docs/grafana/fanout-dashboard.json's queries checked against what that setup exports.
/// </summary>
/// <remarks>Runs alone (the meter and the activity source are process-wide) and still keeps only what its own limit and its own trace produced where tags allow.</remarks>
[Collection(nameof(SerialCollection))]
public sealed class OpenTelemetrySetupTests
{
    private const string TestSourceName = "FanOut.Tests.OpenTelemetry";
    private static readonly ActivitySource s_test = new(TestSourceName);

    [Fact]
    public async Task AddMeterAndAddSource_OverloadedOnce_ExportsEveryDocumentedInstrument()
    {
        var exported = await RunDocumentedSetupAsync();

        var documented = DocumentedInstruments().Where(i => !i.Name.StartsWith("fanout.redis.", StringComparison.Ordinal)).ToList();
        Assert.NotEmpty(documented);
        Assert.All(documented, i => Assert.Contains(i.Name, exported.Metrics.Keys));
        Assert.Empty(typeof(FanOutInstruments).GetFields()
            .Where(f => f.Name != nameof(FanOutInstruments.MeterName) && !f.Name.EndsWith("Tag", StringComparison.Ordinal))
            .Select(f => (string)f.GetRawConstantValue()!)
            .Except(documented.Select(i => i.Name))); // every instrument constant has its row

        // Our limit's overload was counted with its name and reason.
        var changes = exported.Metrics[FanOutInstruments.LimitChanges];
        Assert.Contains(changes.Points, p => p.Tags[FanOutInstruments.LimitNameTag] == exported.LimitName
            && p.Tags[FanOutInstruments.LimitReasonTag] == nameof(LimitChangeReason.Overload)
            && p.Tags[FanOutInstruments.LimitKindTag] == "adaptive");
        Assert.Contains(exported.Metrics[FanOutInstruments.ItemsRetried].Points, p => p.Tags[FanOutInstruments.LimitKindTag] == "adaptive");
        Assert.Contains(exported.Metrics[FanOutInstruments.ItemsFailed].Points, p => p.Tags[FanOutInstruments.LimitKindTag] == "adaptive");
    }

    [Fact]
    public async Task AddMeterAndAddSource_OverloadedOnce_DocumentedPrometheusNamesMatchTheExportedInstruments()
    {
        var exported = await RunDocumentedSetupAsync();

        foreach (var instrument in DocumentedInstruments().Where(i => exported.Metrics.ContainsKey(i.Name)))
        {
            var metric = exported.Metrics[instrument.Name];
            Assert.Equal(PrometheusNames.Of(metric.Name, metric.Unit, metric.Type)[0].Replace("_bucket", "", StringComparison.Ordinal), instrument.Prometheus);
        }
    }

    [Fact]
    public async Task AddMeterAndAddSource_OverloadedOnce_ExportsRunAndItemActivitiesWithTheLimitChange()
    {
        var exported = await RunDocumentedSetupAsync();

        var ours = exported.Activities.Where(a => a.Source.Name == FanOutActivities.SourceName).ToList();
        var run = Assert.Single(ours, a => a.OperationName == FanOutActivities.Run);
        var items = ours.Where(a => a.OperationName == FanOutActivities.Item).ToList();
        Assert.All(items, a => Assert.Equal(run.SpanId, a.ParentSpanId));
        var changes = items.SelectMany(a => a.Events)
            .Where(e => e.Name == FanOutActivities.LimitChangeEvent && (string?)e.Tags.Single(t => t.Key == FanOutActivities.LimitNameTag).Value == exported.LimitName)
            .Select(e => $"{e.Tags.Single(t => t.Key == FanOutActivities.LimitReasonTag).Value}").ToList();
        Assert.True(changes is [nameof(LimitChangeReason.Overload), ..], string.Join(", ", changes)); // the "no" is its first change (the law then probes)
        Assert.Contains(items.SelectMany(a => a.Events), e => e.Name == FanOutActivities.OverloadEvent);
        Assert.Contains(items.SelectMany(a => a.Events), e => e.Name == FanOutActivities.RetryEvent);
    }

    [Fact]
    public async Task PrometheusExporter_Scraped_NamesEveryInstrumentByTheDocumentedRules()
    {
        var exported = await RunDocumentedSetupAsync();

        var expected = exported.Metrics.Values.SelectMany(m => PrometheusNames.Of(m.Name, m.Unit, m.Type)).Order().ToList();
        Assert.Contains("fanout_item_duration_seconds_bucket", expected);
        Assert.Contains("fanout_limit_changes_total", expected);
        Assert.Equal(expected, exported.Scraped.Order());
    }

    [Fact]
    public async Task Dashboard_EveryQuery_SelectsOnlyMetricsTheSetupExports()
    {
        var exported = await RunDocumentedSetupAsync();
        var published = exported.Scraped;

        var exprs = DashboardExpressions();
        Assert.NotEmpty(exprs);
        Assert.All(exprs, expr =>
        {
            var used = PrometheusNames.UsedBy(expr);
            Assert.NotEmpty(used);
            Assert.All(used, name => Assert.True(published.Contains(name), $"'{expr}' selects {name}, which FanOut does not export (it exports {string.Join(", ", published.Order())})."));
        });

        // Every FanOut instrument but the partitions' (shown only when partitioned limits exist) has a panel.
        var usedByDashboard = exprs.SelectMany(PrometheusNames.UsedBy).ToHashSet();
        Assert.All(
            exported.Metrics.Values,
            m => Assert.True(PrometheusNames.Of(m.Name, m.Unit, m.Type).Any(usedByDashboard.Contains), $"No panel queries {m.Name}."));
    }

    [Theory]
    [InlineData("sum(rate(fanout_items_completed[1m]))")] // a counter without _total
    [InlineData("histogram_quantile(0.99, sum by (le) (rate(fanout_item_duration_bucket[5m])))")] // no _seconds
    [InlineData("fanout_limit_current_total")]
    [InlineData("sum by (fanout_limit_reason) (rate(fanout_limit_change_total{fanout_limit_kind=\"adaptive\"}[$__rate_interval]))")]
    public async Task Dashboard_QueryOfAMisnamedMetric_IsCaught(string expr)
    {
        var exported = await RunDocumentedSetupAsync();

        Assert.Contains(PrometheusNames.UsedBy(expr), name => !exported.Scraped.Contains(name));
    }

    [Fact]
    public void UsedBy_LabelsDurationsAndFunctions_AreNotMetricNames()
    {
        var used = PrometheusNames.UsedBy(
            "histogram_quantile(0.5, sum by (le, fanout_limit_kind) (rate(fanout_item_duration_seconds_bucket{fanout_limit_kind=~\"$kind\"}[$__rate_interval])))");

        Assert.Equal(["fanout_item_duration_seconds_bucket"], used);
    }

    private sealed record ExportedMetric(string Name, string? Unit, MetricType Type, IReadOnlyList<ExportedPoint> Points);

    private sealed record ExportedPoint(IReadOnlyDictionary<string, string?> Tags);

    /// <summary>What one run exported.</summary>
    /// <param name="LimitName">The run's adaptive limit's name.</param>
    /// <param name="Metrics">The in-memory exporter's FanOut instruments by name.</param>
    /// <param name="Activities">The activities of the run's trace.</param>
    /// <param name="Scraped">The FanOut series names OpenTelemetry's Prometheus exporter served.</param>
    private sealed record Exported(string LimitName, IReadOnlyDictionary<string, ExportedMetric> Metrics, IReadOnlyList<Activity> Activities, IReadOnlySet<string> Scraped);

    private sealed record DocumentedInstrument(string Name, string Prometheus);

    /// <summary>
    /// The documented setup, plus the in-memory exporters and the Prometheus exporter (scraped once): a small run with an
    /// adaptive limit whose body is overloaded once and one item fails.
    /// </summary>
    private static async Task<Exported> RunDocumentedSetupAsync()
    {
        var metrics = new List<MetricSnapshot>();
        var activities = new List<Activity>();
        var port = FreePort();
        var services = new ServiceCollection();
        services.AddOpenTelemetry()
            .WithMetrics(m => m.AddMeter("FanOut").AddInMemoryExporter(metrics).AddPrometheusHttpListener(o => o.Port = port))
            .WithTracing(t => t.AddSource("FanOut").AddSource(TestSourceName).AddInMemoryExporter(activities));
        await using var provider = services.BuildServiceProvider();
        var meterProvider = provider.GetRequiredService<MeterProvider>();
        var tracerProvider = provider.GetRequiredService<TracerProvider>();

        var name = $"otel-test-{Guid.NewGuid():N}";
        var partitioned = ConcurrencyLimit.Partitioned<string>(4, _ => ConcurrencyLimit.Fixed(2));
        _ = partitioned.KeyLimit("tenant-a"); // a live key for the partition gauge to observe
        var attempts = 0;
        using (var parent = s_test.StartActivity("test"))
        {
            Assert.NotNull(parent);
            var call = Enumerable.Range(0, 4).ToArray().FanOutAsync(
                async (i, ct) =>
                {
                    await Task.Yield();
                    if (i == 0 && Interlocked.Increment(ref attempts) == 1)
                    {
                        throw new OverloadedException("busy", TimeSpan.Zero);
                    }

                    if (i == 3)
                    {
                        throw new InvalidOperationException("fails");
                    }
                },
                new FanOutOptions { Limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { Name = name }), Errors = ErrorMode.RunAll });
            var settled = await call.Settled();
            Assert.True(settled.IsFaulted);
        }

        Assert.True(tracerProvider.ForceFlush());
        _ = meterProvider.ForceFlush(); // false, as the Prometheus reader is scraped, not flushed; the in-memory reader exports
        using var http = new HttpClient();
        var scrape = await http.GetStringAsync(new Uri($"http://localhost:{port}/metrics")).WaitAsync(TimeSpan.FromSeconds(30));
        GC.KeepAlive(partitioned);
        var scraped = scrape.Split('\n')
            .Where(line => line.StartsWith("fanout_", StringComparison.Ordinal))
            .Select(line => line[..line.IndexOfAny(['{', ' '])])
            .ToHashSet();

        var byName = new Dictionary<string, ExportedMetric>();
        foreach (var metric in metrics.Where(m => m.MeterName == "FanOut"))
        {
            var points = metric.MetricPoints.Select(p =>
            {
                var tags = new Dictionary<string, string?>();
                foreach (var tag in p.Tags)
                {
                    tags[tag.Key] = tag.Value?.ToString();
                }

                return new ExportedPoint(tags);
            }).ToList();
            byName[metric.Name] = new ExportedMetric(metric.Name, metric.Unit, metric.MetricType, points);
        }

        var traceId = activities.Single(a => a.Source.Name == TestSourceName).TraceId;
        return new Exported(name, byName, [.. activities.Where(a => a.TraceId == traceId)], scraped);
    }

    /// <summary>The rows of docs/opentelemetry.md's instrument tables: the instrument's name (first column) and its Prometheus name (last column).</summary>
    private static List<DocumentedInstrument> DocumentedInstruments()
    {
        var lines = File.ReadAllLines(Path.Combine(RepositoryRoot(), "docs", "opentelemetry.md"));
        var start = Array.IndexOf(lines, "## Metrics");
        Assert.True(start >= 0, "docs/opentelemetry.md has no '## Metrics' section.");
        return [.. lines.Skip(start + 1)
            .TakeWhile(l => !l.StartsWith("## ", StringComparison.Ordinal))
            .Where(l => l.StartsWith("| `fanout.", StringComparison.Ordinal))
            .Select(l => l.Split('|', StringSplitOptions.TrimEntries))
            .Select(cells => new DocumentedInstrument(cells[1].Trim('`'), cells[^2].Trim('`')))];
    }

    /// <summary>Every <c>expr</c> in docs/grafana/fanout-dashboard.json, at any depth.</summary>
    private static List<string> DashboardExpressions()
    {
        using var dashboard = JsonDocument.Parse(File.ReadAllText(Path.Combine(RepositoryRoot(), "docs", "grafana", "fanout-dashboard.json")));
        var exprs = new List<string>();
        Collect(dashboard.RootElement);
        return exprs;

        void Collect(JsonElement element)
        {
            switch (element.ValueKind)
            {
                case JsonValueKind.Object:
                    foreach (var property in element.EnumerateObject())
                    {
                        if (property.Name == "expr" && property.Value.ValueKind == JsonValueKind.String)
                        {
                            exprs.Add(property.Value.GetString()!);
                        }
                        else
                        {
                            Collect(property.Value);
                        }
                    }

                    break;
                case JsonValueKind.Array:
                    foreach (var item in element.EnumerateArray())
                    {
                        Collect(item);
                    }

                    break;
            }
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private static string RepositoryRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "FanOut.slnx")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No FanOut.slnx above {AppContext.BaseDirectory}.");
    }
}
