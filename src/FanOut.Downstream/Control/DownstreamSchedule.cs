using System.Globalization;

namespace FanOut.Downstream.Control;

/// <summary>Changes to apply to a running server at set times from its start: <c>fanout serve --schedule</c>.</summary>
/// <remarks>
/// The text form is steps separated by <c>;</c>, each a time from the start (<c>5s</c>, <c>1.5s</c> or <c>500ms</c>) and
/// <see cref="DownstreamChange"/> settings separated by spaces:
/// <c>5s capacity=16 phase=halved; 15s capacity=32 phase=recovered; 20s storm=2</c>. Steps run in time order.
/// </remarks>
public sealed class DownstreamSchedule
{
    /// <summary>The form a step takes, for error messages.</summary>
    public const string ValidForm = "TIME SETTING=VALUE ...; TIME ... (TIME as 5s, 1.5s or 500ms, in order)";

    private DownstreamSchedule(IReadOnlyList<(TimeSpan At, DownstreamChange Change)> steps) => Steps = steps;

    /// <summary>The steps, in time order.</summary>
    public IReadOnlyList<(TimeSpan At, DownstreamChange Change)> Steps { get; }

    /// <summary>Reads a schedule; on failure, one line naming the bad step or value and the valid form.</summary>
    /// <param name="text">The schedule, e.g. <c>5s capacity=16; 15s capacity=32</c>.</param>
    /// <param name="schedule">The schedule, when every step is valid.</param>
    /// <param name="error">Otherwise, e.g. <c>step 2 '15 capacity=32': the time '15' is not ...</c>.</param>
    /// <returns>Whether the schedule was valid.</returns>
    public static bool TryParse(string text, out DownstreamSchedule? schedule, out string? error)
    {
        ArgumentNullException.ThrowIfNull(text);
        schedule = null;
        var steps = new List<(TimeSpan, DownstreamChange)>();
        var parts = text.Split(';', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
        if (parts.Length == 0)
        {
            error = $"the schedule is empty: use {ValidForm}.";
            return false;
        }

        for (var i = 0; i < parts.Length; i++)
        {
            var words = parts[i].Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (ParseTime(words[0]) is not { } at)
            {
                error = $"step {i + 1} '{parts[i]}': the time '{words[0]}' is not a time from the start: use {ValidForm}.";
                return false;
            }

            if (steps.Count > 0 && at < steps[^1].Item1)
            {
                error = $"step {i + 1} '{parts[i]}': its time comes before the step before it: list the steps in time order.";
                return false;
            }

            var settings = new List<KeyValuePair<string, string>>();
            foreach (var word in words.Skip(1))
            {
                var equals = word.IndexOf('=', StringComparison.Ordinal);
                if (equals <= 0)
                {
                    error = $"step {i + 1} '{parts[i]}': '{word}' is not SETTING=VALUE: valid settings are {DownstreamChange.ValidSettings}.";
                    return false;
                }

                settings.Add(KeyValuePair.Create(word[..equals], word[(equals + 1)..]));
            }

            if (!DownstreamChange.TryParse(settings, out var change, out var changeError))
            {
                error = $"step {i + 1} '{parts[i]}': {changeError}";
                return false;
            }

            steps.Add((at, change!));
        }

        schedule = new DownstreamSchedule(steps);
        error = null;
        return true;
    }

    /// <summary>Applies each step to <paramref name="server"/> at its time from now, by <paramref name="time"/>'s clock.</summary>
    /// <returns>A task that completes after the last step, or is cancelled by <paramref name="cancellationToken"/>.</returns>
    public async Task RunAsync(DownstreamServer server, TimeProvider time, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(server);
        ArgumentNullException.ThrowIfNull(time);
        var started = time.GetTimestamp();
        foreach (var (at, change) in Steps)
        {
            var wait = at - time.GetElapsedTime(started);
            if (wait > TimeSpan.Zero)
            {
                await Task.Delay(wait, time, cancellationToken).ConfigureAwait(false);
            }

            server.Apply(change);
        }
    }

    /// <inheritdoc/>
    public override string ToString() =>
        string.Join("; ", Steps.Select(s => string.Create(CultureInfo.InvariantCulture, $"{s.At.TotalSeconds}s {s.Change}")));

    private static TimeSpan? ParseTime(string word)
    {
        var (number, unit) = word.EndsWith("ms", StringComparison.OrdinalIgnoreCase) ? (word[..^2], 0.001)
            : word.EndsWith('s') || word.EndsWith('S') ? (word[..^1], 1.0)
            : (word, double.NaN);
        return !double.IsNaN(unit) && double.TryParse(number, NumberStyles.Float, CultureInfo.InvariantCulture, out var value) && double.IsFinite(value) && value is >= 0 and <= 86_400
            ? TimeSpan.FromSeconds(value * unit)
            : null;
    }
}
