using System.CommandLine;

using FanOut.Cli.Output;
using FanOut.Lab.Probing;
using FanOut.Lab.Results;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary><c>fanout probe &lt;url&gt;</c>: measures what the user's endpoint affords, level by level, and says what limit to write.</summary>
public static class ProbeCommand
{
    /// <summary>Builds the command.</summary>
    public static Command Create(CliContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var urlArgument = new Argument<string>("url") { Description = "The endpoint to probe: an absolute http:// or https:// URL." };
        var methodOption = new Option<string?>("--method") { Description = $"HTTP method (default GET): {string.Join(", ", ProbeCommandSettings.Methods)}." };
        var headerOption = new Option<string[]>("--header") { Description = "A header 'Name: value' sent with every request; repeat for more." };
        var bodyOption = new Option<string?>("--body-file") { Description = "A file whose bytes are the body of every request." };
        var maxConcurrencyOption = NumberOption.Create("--max-concurrency", $"The highest concurrency tried, 1-{ProbeSettings.MaxAllowedConcurrency} (default {ProbeSettings.DefaultMaxConcurrency}).", $"use a whole number from 1 to {ProbeSettings.MaxAllowedConcurrency}, e.g. 64");
        var maxRequestsOption = NumberOption.Create("--max-requests", $"Hard stop: never send more requests than this (default {ProbeSettings.DefaultMaxRequests:N0}).", "use a whole number of at least 1, e.g. 5000");
        var maxRateOption = NumberOption.Create("--max-rate", "Hard pace: never start more requests per second than this (default: no pace).", "use a positive number of requests per second, e.g. 200");
        var insecureOption = new Option<bool>("--insecure") { Description = "Accept any TLS certificate (a self-signed development endpoint)." };
        var caFileOption = new Option<string?>("--ca-file") { Description = "A PEM file of CA certificates to trust for TLS (a development CA); the host name must still match." };
        var durationOption = NumberOption.Create("--duration", "Hard stop: stop sending after this many seconds (default: no limit).", "use a positive number of seconds, e.g. 60");
        var timeoutOption = NumberOption.Create("--timeout", $"Seconds one request may take before it counts as a timeout (default {ProbeSettings.DefaultTimeoutSeconds}).", "use a positive number of seconds, e.g. 5");
        var sloOption = NumberOption.Create("--slo-p99", "Latency objective in ms: a level whose p99 is above it is never recommended (default: none).", "use a positive number of milliseconds, e.g. 200");
        var outOption = new Option<string?>("--out") { Description = "Folder for probe.json (default fanout-results/<timestamp>)." };
        var jsonOption = new Option<bool>("--json") { Description = "Print probe.json to stdout and nothing else." };
        var command = new Command("probe", "Measure how many calls at once an HTTP endpoint affords, and print the limit to write.")
        {
            urlArgument, methodOption, headerOption, bodyOption, maxConcurrencyOption, maxRequestsOption, maxRateOption, durationOption, timeoutOption, sloOption, insecureOption, caFileOption, outOption, jsonOption,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var settings = ProbeCommandSettings.Validate(
                new ProbeCommandInput(
                    parse.GetValue(urlArgument)!,
                    parse.GetValue(methodOption),
                    parse.GetValue(headerOption) ?? [],
                    parse.GetValue(bodyOption),
                    parse.GetValue(maxConcurrencyOption),
                    parse.GetValue(maxRequestsOption),
                    parse.GetValue(durationOption),
                    parse.GetValue(timeoutOption),
                    parse.GetValue(sloOption),
                    parse.GetValue(outOption),
                    parse.GetValue(jsonOption),
                    parse.GetValue(maxRateOption),
                    parse.GetValue(insecureOption),
                    parse.GetValue(caFileOption)),
                context.Clock.GetUtcNow(),
                out var error);
            if (settings is null)
            {
                context.Error.WriteLine($"fanout: {error}");
                return ExitCodes.Usage;
            }

            return await ProbeAsync(context, settings, cancellationToken).ConfigureAwait(false);
        });
        return command;
    }

    private static async Task<int> ProbeAsync(CliContext context, ProbeCommandSettings settings, CancellationToken cancellationToken)
    {
        var console = context.Console;
        var probe = settings.Probe;
        var view = new ProbeProgressView(console, context.Interactive && !settings.Json, quiet: settings.Json);
        if (!ProbeCommandSettings.IsLoopback(probe.Url))
        {
            context.Error.WriteLine($"fanout: warning: {probe.Url.Host} is not this machine: the probe pushes it until it rejects or queues; probe only endpoints you own or may load-test.");
        }

        if (!settings.Json)
        {
            console.WriteLine($"Probing {probe.Method} {probe.Url}, up to {probe.MaxConcurrency} at once{Limits(probe)}. Ctrl+C stops and keeps what was measured.");
        }

        var prober = new Prober(probe, view, context.Clock);
        ProbeReport report;
        try
        {
            report = view.Live
                ? await console.Status().StartAsync("reaching the target", async status =>
                {
                    view.Status = text => status.Status(Markup.Escape(text));
                    return await prober.RunAsync(cancellationToken).ConfigureAwait(false);
                }).ConfigureAwait(false)
                : await prober.RunAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (UnreachableTargetException ex)
        {
            context.Error.WriteLine($"fanout: {ex.Message}");
            return ExitCodes.TargetUnreachable;
        }
        catch (OperationCanceledException)
        {
            context.Error.WriteLine("fanout: interrupted before the target answered; nothing was measured.");
            return ExitCodes.Canceled;
        }

        var path = ProbeReportFile.Write(settings.OutPath, report);
        if (settings.Json)
        {
            console.Profile.Out.Writer.WriteLine(ProbeReportFile.ToJson(report));
        }
        else
        {
            ProbeSummary.Write(console, report, path);
        }

        if (report.EndedBy == LevelEnd.Interrupted)
        {
            context.Error.WriteLine("fanout: interrupted; the levels measured are in probe.json.");
            return ExitCodes.Canceled;
        }

        return report.Recommendation.Status switch
        {
            RecommendationStatus.Final => ExitCodes.Success,
            RecommendationStatus.AtLeast => ExitCodes.ProbeAtLeast,
            RecommendationStatus.Unconfirmed => ExitCodes.ProbeUnconfirmed,
            _ => ExitCodes.ProbeNoRecommendation,
        };
    }

    private static string Limits(ProbeSettings probe)
    {
        var limits = new List<string>();
        limits.Add(probe.MaxRequests is { } max ? $"at most {max:N0} requests (--max-requests)" : "no request budget");
        if (probe.MaxRatePerSecond is { } rate)
        {
            limits.Add($"at most {rate:0.##} requests/s (--max-rate)");
        }

        if (probe.Insecure)
        {
            limits.Add("any TLS certificate accepted (--insecure)");
        }

        if (probe.Duration is { } duration)
        {
            limits.Add($"at most {duration.TotalSeconds:0.###} s");
        }

        if (probe.SloP99Ms is { } slo)
        {
            limits.Add($"p99 objective {slo:0.###} ms");
        }

        return limits.Count == 0 ? string.Empty : ", " + string.Join(", ", limits);
    }
}
