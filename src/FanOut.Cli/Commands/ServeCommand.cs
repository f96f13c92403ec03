using System.CommandLine;
using System.Globalization;

using FanOut.Downstream;
using FanOut.Downstream.Control;
using FanOut.Downstream.Latency;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary><c>fanout serve</c>: runs the downstream test server on 127.0.0.1 until Ctrl+C, then stops it cleanly.</summary>
public static class ServeCommand
{
    /// <summary>Builds the command.</summary>
    public static Command Create(CliContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var portOption = NumberOption.Create("--port", "TCP port on 127.0.0.1, 0-65535 (default 0: a free port).", "use a whole number from 0 to 65535, e.g. 5080");
        var capacityOption = NumberOption.Create("--capacity", $"Requests served at once, 1-{DownstreamOptions.MaxCapacity} (default 16).", $"use a whole number from 1 to {DownstreamOptions.MaxCapacity}, e.g. 64");
        var queueOption = NumberOption.Create("--queue", $"Requests waiting for a slot, 0-{DownstreamOptions.MaxQueue} (default 64).", $"use a whole number from 0 to {DownstreamOptions.MaxQueue}, e.g. 64");
        var rateOption = NumberOption.Create("--rate", $"Token-bucket rate limit in requests/s, {DownstreamOptions.MinRatePerSecond}-{DownstreamOptions.MaxRatePerSecond} (default: none).", "use a number of requests per second, e.g. 500");
        var latencyOption = new Option<string?>("--latency") { Description = $"Service time per request (default fixed:20): {LatencySpec.ValidForms}." };
        var scheduleOption = new Option<string?>("--schedule") { Description = $"Changes at set times from the start: {DownstreamSchedule.ValidForm}; settings {DownstreamChange.ValidSettings}." };
        var command = new Command("serve", "Run the downstream test server on 127.0.0.1 until Ctrl+C.")
        {
            portOption, capacityOption, queueOption, rateOption, latencyOption, scheduleOption,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var options = Validate(
                parse.GetValue(portOption),
                parse.GetValue(capacityOption),
                parse.GetValue(queueOption),
                parse.GetValue(rateOption),
                parse.GetValue(latencyOption),
                out var error);
            DownstreamSchedule? schedule = null;
            if (options is not null && parse.GetValue(scheduleOption) is { } scheduleText && !DownstreamSchedule.TryParse(scheduleText, out schedule, out var scheduleError))
            {
                (options, error) = (null, $"--schedule: {scheduleError}");
            }

            if (options is null)
            {
                context.Error.WriteLine($"fanout: {error}");
                return ExitCodes.Usage;
            }

            return await ServeAsync(context.Console, options, schedule, cancellationToken).ConfigureAwait(false);
        });
        return command;
    }

    /// <summary>Checks the raw values; returns the server options, or null with a one-line error naming the bad value and its valid range.</summary>
    public static DownstreamOptions? Validate(double? port, double? capacity, double? queue, double? rate, string? latency, out string? error)
    {
        error = WholeNumberRange.Check("--port", port, 0, 65535)
            ?? WholeNumberRange.Check("--capacity", capacity, 1, DownstreamOptions.MaxCapacity)
            ?? WholeNumberRange.Check("--queue", queue, 0, DownstreamOptions.MaxQueue);
        if (error is null && rate is { } r && !(r >= DownstreamOptions.MinRatePerSecond && r <= DownstreamOptions.MaxRatePerSecond))
        {
            error = $"--rate {Text(r)} is outside [{Text(DownstreamOptions.MinRatePerSecond)}, {Text(DownstreamOptions.MaxRatePerSecond)}] requests/s: use e.g. --rate 500, or leave it out for no limit.";
        }

        LatencySpec? spec = null;
        if (error is null && latency is not null && !LatencySpec.TryParse(latency, out spec, out var latencyError))
        {
            error = $"--latency: {latencyError}";
        }

        if (error is not null)
        {
            return null;
        }

        var defaults = new DownstreamOptions();
        return defaults with
        {
            Port = (int)(port ?? defaults.Port),
            Capacity = (int)(capacity ?? defaults.Capacity),
            Queue = (int)(queue ?? defaults.Queue),
            RatePerSecond = rate,
            Latency = spec ?? defaults.Latency,
        };
    }

    private static async Task<int> ServeAsync(IAnsiConsole console, DownstreamOptions options, DownstreamSchedule? schedule, CancellationToken cancellationToken)
    {
        DownstreamServer server;
        try
        {
            server = await DownstreamServer.StartAsync(options, cancellationToken).ConfigureAwait(false);
        }
        catch (IOException ex)
        {
            console.WriteLine($"fanout: could not listen on 127.0.0.1:{options.Port} ({ex.Message.TrimEnd('.')}): choose another --port, or 0 for a free one.");
            return ExitCodes.Usage;
        }

        await using (server.ConfigureAwait(false))
        {
            var rate = options.RatePerSecond is { } r ? $"{Text(r)} requests/s" : "none";
            console.WriteLine($"Downstream listening on {server.BaseAddress}");
            console.WriteLine($"capacity {options.Capacity}, queue {options.Queue}, rate limit {rate}, latency {options.Latency}");
            console.WriteLine($"GET {server.BaseAddress}item/{{id}}, {server.BaseAddress}price/{{id}}, {server.BaseAddress}stats; POST {server.BaseAddress}stats/reset.");
            console.WriteLine($"PUT {server.BaseAddress}control?capacity=N&queue=Q&latency=SPEC&storm=SECONDS&phase=NAME changes it while it runs. Ctrl+C stops.");
            if (schedule is not null)
            {
                console.WriteLine($"Schedule: {schedule}");
            }

            using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            var scheduled = schedule?.RunAsync(server, TimeProvider.System, stop.Token) ?? Task.CompletedTask;
            try
            {
                await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                // Ctrl+C: fall through to a clean stop.
            }

            // The schedule's steps not yet due are dropped; it is awaited, so nothing outlives the command.
            await stop.CancelAsync().ConfigureAwait(false);
            await scheduled.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            await server.StopAsync(CancellationToken.None).ConfigureAwait(false);
            var stats = server.GetStats();
            console.WriteLine($"Stopped. Served {stats.RequestsServed:N0}, rejected {stats.Rejected429:N0} with 429, peak {stats.PeakConcurrentServed:N0} at once.");
        }

        return ExitCodes.Success;
    }

    private static string Text(double value) => value.ToString(CultureInfo.InvariantCulture);
}
