using System.CommandLine;
using System.Globalization;

using FanOut.Cli.Watch;

using Spectre.Console;

namespace FanOut.Cli.Commands;

/// <summary>
/// <c>fanout watch &lt;pid|name&gt;</c>: attaches to a running .NET process over its diagnostics port and shows its FanOut
/// limits live (a table, a chart of the chosen limit, the decisions with their reasons), or streams them as JSON lines.
/// Ends cleanly on Ctrl+C, on <c>q</c>, and when the process exits.
/// </summary>
public static class WatchCommand
{
    /// <summary>The default interval of limit states, in seconds.</summary>
    public const double DefaultInterval = 1;

    /// <summary>The default wait for FanOut to answer after attaching, in seconds.</summary>
    public const double DefaultAttachTimeout = 10;

    /// <summary>Builds the command.</summary>
    public static Command Create(CliContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var targetArgument = new Argument<string>("process") { Description = "The process id, or its name (as 'fanout watch' lists them when a name matches none)." };
        var jsonOption = new Option<bool>("--json") { Description = "Stream JSON lines (attached, state, change, detached) instead of the live view." };
        var intervalOption = NumberOption.Create("--interval", $"Seconds between limit states, 0.1-60 (default {DefaultInterval}).", "use a number of seconds from 0.1 to 60, e.g. --interval 0.5");
        var timeoutOption = NumberOption.Create("--attach-timeout", $"Seconds to wait for FanOut to answer after attaching, 1-600 (default {DefaultAttachTimeout}).", "use a number of seconds from 1 to 600, e.g. --attach-timeout 30");
        var limitOption = new Option<string?>("--limit") { Description = "The name of the limit the chart shows first (default: the busiest)." };
        var command = new Command("watch", "Watch a running process's FanOut limits and their decisions, live.")
        {
            targetArgument, jsonOption, intervalOption, timeoutOption, limitOption,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var interval = parse.GetValue(intervalOption) ?? DefaultInterval;
            var timeout = parse.GetValue(timeoutOption) ?? DefaultAttachTimeout;
            var error = Range("--interval", interval, 0.1, 60, "--interval 0.5") ?? Range("--attach-timeout", timeout, 1, 600, "--attach-timeout 30");
            if (error is not null)
            {
                context.Error.WriteLine($"fanout: {error}");
                return ExitCodes.Usage;
            }

            var settings = new WatchSettings(
                parse.GetValue(targetArgument)!, parse.GetValue(jsonOption), TimeSpan.FromSeconds(interval), TimeSpan.FromSeconds(timeout), parse.GetValue(limitOption));
            return await WatchAsync(context, settings, cancellationToken).ConfigureAwait(false);
        });
        return command;
    }

    private static string? Range(string name, double value, double min, double max, string example) =>
        double.IsFinite(value) && value >= min && value <= max
            ? null
            : $"{name} {value.ToString(CultureInfo.InvariantCulture)} is outside [{min.ToString(CultureInfo.InvariantCulture)}, {max.ToString(CultureInfo.InvariantCulture)}] seconds: use e.g. {example}.";

    private static async Task<int> WatchAsync(CliContext context, WatchSettings settings, CancellationToken cancellationToken)
    {
        if (WatchTarget.Find(settings.Target, out var findError) is not { } target)
        {
            context.Error.WriteLine($"fanout watch: {findError}");
            return ExitCodes.CannotAttach;
        }

        if (FanOutEventSession.Start(target, settings.Interval, out var attachError) is not { } session)
        {
            context.Error.WriteLine($"fanout watch: {attachError}");
            return ExitCodes.CannotAttach;
        }

        await using (session.ConfigureAwait(false))
        {
            var model = new WatchModel { PreferredName = settings.Limit };
            var output = settings.Json ? new JsonOutput(context.Console, model) : (WatchOutput)(context.Interactive ? new LiveOutput(context.Console, target, model) : new PlainOutput(context.Console, model));

            // FanOut answers at once when the session starts (the first interval closes then); until it does, FanOut is not there.
            var answered = await FirstIntervalAsync(session, model, output, settings.AttachTimeout, cancellationToken).ConfigureAwait(false);
            if (answered is null)
            {
                return ExitCodes.Success; // Ctrl+C while waiting
            }

            if (answered == false)
            {
                var why = session.Events.Completion.IsCompleted
                    ? $"process {target} exited before FanOut answered."
                    : $"process {target} shows no FanOut: it has not loaded FanOut, or has created no limit yet (nothing answered in {settings.AttachTimeout.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s; --attach-timeout waits longer).";
                context.Error.WriteLine($"fanout watch: {why}");
                return ExitCodes.CannotAttach;
            }

            output.Attached(target);
            var exited = await output.RunAsync(session.Events, cancellationToken).ConfigureAwait(false);
            output.Detached(target, exited ? "exited" : "stopped");
            return ExitCodes.Success;
        }
    }

    /// <summary>True once the first interval closed; false if the process exited or the timeout passed first; null on Ctrl+C.</summary>
    private static async Task<bool?> FirstIntervalAsync(FanOutEventSession session, WatchModel model, WatchOutput output, TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        wait.CancelAfter(timeout);
        try
        {
            await foreach (var e in session.Events.ReadAllAsync(wait.Token).ConfigureAwait(false))
            {
                model.Apply(e);
                output.Buffer(e);
                if (e is IntervalClosedEvent)
                {
                    return true;
                }
            }

            return false;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return false;
        }
        catch (OperationCanceledException)
        {
            return null;
        }
    }

    private sealed record WatchSettings(string Target, bool Json, TimeSpan Interval, TimeSpan AttachTimeout, string? Limit);
}
