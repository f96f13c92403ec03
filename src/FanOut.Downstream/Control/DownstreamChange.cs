using System.Globalization;

using FanOut.Downstream.Latency;

namespace FanOut.Downstream.Control;

/// <summary>A change to a running <see cref="DownstreamServer"/> (<see cref="DownstreamServer.Apply"/>, <c>PUT /control</c>, a
/// <c>--schedule</c> step): the settings given change together, the rest stay as they are.</summary>
/// <remarks>
/// The text form, used by <c>PUT /control?...</c> and <c>fanout serve --schedule</c>, is <c>name=value</c> settings:
/// <c>capacity=16</c>, <c>queue=0</c>, <c>latency=lognormal:20,p99=80</c>, <c>storm=2</c> (seconds of 429 with
/// <c>Retry-After</c> to every work request), <c>phase=halved</c> (a name <c>/stats</c> reports).
/// </remarks>
public sealed record DownstreamChange
{
    /// <summary>The longest Retry-After storm: an hour.</summary>
    public static readonly TimeSpan MaxStorm = TimeSpan.FromHours(1);

    /// <summary>The most characters of a phase name.</summary>
    public const int MaxPhaseLength = 64;

    /// <summary>The settings' names, as the text form spells them.</summary>
    public const string ValidSettings = "capacity=N (1-10000), queue=Q (0-100000), latency=SPEC, storm=SECONDS (0-3600, 0 ends one), phase=NAME";

    /// <summary>A name for what the server now plays (e.g. <c>halved</c>), reported by <c>/stats</c>; null keeps the current one.</summary>
    /// <value>Up to 64 letters, digits, '-', '_' or '.'.</value>
    public string? Phase { get; init; }

    /// <summary>Requests served at once from now on; null keeps the current capacity.</summary>
    /// <value>1 to <see cref="DownstreamOptions.MaxCapacity"/>. A lower capacity lets the requests being served finish and admits no new one above it.</value>
    public int? Capacity { get; init; }

    /// <summary>Requests that may wait for a slot from now on; null keeps the current queue.</summary>
    /// <value>0 to <see cref="DownstreamOptions.MaxQueue"/>. A shorter queue answers 429 to its newest waiters beyond the new length.</value>
    public int? Queue { get; init; }

    /// <summary>The service time of requests that start their work from now on; null keeps the current one.</summary>
    public LatencySpec? Latency { get; init; }

    /// <summary>A Retry-After storm: for this long every work request is answered 429 with <c>Retry-After</c> (the seconds left,
    /// rounded up) and <c>X-Reject-Reason: storm</c>; <see cref="TimeSpan.Zero"/> ends a storm; null leaves it as it is.</summary>
    /// <value>0 to <see cref="MaxStorm"/>. Requests already admitted are served.</value>
    public TimeSpan? RetryAfterStorm { get; init; }

    /// <summary>Checks every setting given.</summary>
    /// <exception cref="ArgumentOutOfRangeException">A number is outside its range; the message names the value and the range.</exception>
    /// <exception cref="ArgumentException"><see cref="Phase"/> is not a valid name.</exception>
    public void Validate()
    {
        if (Capacity is { } capacity && capacity is < 1 or > DownstreamOptions.MaxCapacity)
        {
            throw new ArgumentOutOfRangeException(nameof(Capacity), capacity, $"capacity must be in [1, {DownstreamOptions.MaxCapacity}]; got {capacity}.");
        }

        if (Queue is { } queue && queue is < 0 or > DownstreamOptions.MaxQueue)
        {
            throw new ArgumentOutOfRangeException(nameof(Queue), queue, $"queue must be in [0, {DownstreamOptions.MaxQueue}]; got {queue}.");
        }

        if (RetryAfterStorm is { } storm && (storm < TimeSpan.Zero || storm > MaxStorm))
        {
            throw new ArgumentOutOfRangeException(nameof(RetryAfterStorm), storm, $"storm must be in [0, {MaxStorm.TotalSeconds}] seconds; got {storm.TotalSeconds.ToString(CultureInfo.InvariantCulture)}.");
        }

        if (Phase is { } phase && !IsPhaseName(phase))
        {
            throw new ArgumentException($"phase must be 1-{MaxPhaseLength} letters, digits, '-', '_' or '.'; got '{phase}'.", nameof(Phase));
        }
    }

    /// <summary>Reads settings in the text form (<c>name=value</c> pairs); on failure, one line naming the bad setting or value and the valid ones.</summary>
    /// <param name="settings">The pairs, e.g. from a query string.</param>
    /// <param name="change">The change, when every setting is valid.</param>
    /// <param name="error">Otherwise, e.g. <c>capacity must be in [1, 10000]; got 0.</c></param>
    /// <returns>Whether every setting was valid (and at least one was given).</returns>
    public static bool TryParse(IEnumerable<KeyValuePair<string, string>> settings, out DownstreamChange? change, out string? error)
    {
        ArgumentNullException.ThrowIfNull(settings);
        change = null;
        var parsed = new DownstreamChange();
        var any = false;
        foreach (var (name, value) in settings)
        {
            any = true;
            error = name.ToLowerInvariant() switch
            {
                "capacity" => Whole(name, value, out var capacity) ?? Set(parsed = parsed with { Capacity = capacity }),
                "queue" => Whole(name, value, out var queue) ?? Set(parsed = parsed with { Queue = queue }),
                "latency" => LatencySpec.TryParse(value, out var spec, out var latencyError) ? Set(parsed = parsed with { Latency = spec }) : $"latency: {latencyError}",
                "storm" => double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out var seconds) && double.IsFinite(seconds) && seconds is >= 0 and <= 3600
                    ? Set(parsed = parsed with { RetryAfterStorm = TimeSpan.FromSeconds(seconds) })
                    : $"storm must be a number of seconds in [0, 3600]; got '{value}'.",
                "phase" => Set(parsed = parsed with { Phase = value }),
                _ => $"unknown setting '{name}': valid settings are {ValidSettings}.",
            };
            if (error is not null)
            {
                return false;
            }
        }

        if (!any)
        {
            error = $"no setting given: valid settings are {ValidSettings}.";
            return false;
        }

        try
        {
            parsed.Validate();
        }
        catch (ArgumentException ex)
        {
            error = FirstLine(ex.Message);
            return false;
        }

        change = parsed;
        error = null;
        return true;
    }

    /// <summary>The change in its text form, e.g. <c>capacity=16 queue=0</c>.</summary>
    public override string ToString()
    {
        var parts = new List<string>();
        if (Phase is not null)
        {
            parts.Add($"phase={Phase}");
        }

        if (Capacity is { } capacity)
        {
            parts.Add(string.Create(CultureInfo.InvariantCulture, $"capacity={capacity}"));
        }

        if (Queue is { } queue)
        {
            parts.Add(string.Create(CultureInfo.InvariantCulture, $"queue={queue}"));
        }

        if (Latency is not null)
        {
            parts.Add($"latency={Latency}");
        }

        if (RetryAfterStorm is { } storm)
        {
            parts.Add(string.Create(CultureInfo.InvariantCulture, $"storm={storm.TotalSeconds}"));
        }

        return string.Join(' ', parts);
    }

    private static bool IsPhaseName(string phase)
        => phase.Length is > 0 and <= MaxPhaseLength && phase.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.');

    private static string? Whole(string name, string value, out int number)
    {
        if (int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out number))
        {
            return null;
        }

        var range = name.Equals("queue", StringComparison.OrdinalIgnoreCase) ? $"[0, {DownstreamOptions.MaxQueue}]" : $"[1, {DownstreamOptions.MaxCapacity}]";
        return $"{name.ToLowerInvariant()} must be a whole number in {range}; got '{value}'.";
    }

    private static string? Set(DownstreamChange _) => null;

    /// <summary>ArgumentException appends " (Parameter 'x')"; the line before it is the message.</summary>
    private static string FirstLine(string message)
    {
        var cut = message.IndexOf(" (Parameter", StringComparison.Ordinal);
        var line = cut < 0 ? message : message[..cut];
        var newline = line.IndexOf('\n', StringComparison.Ordinal);
        return newline < 0 ? line : line[..newline].TrimEnd('\r');
    }
}
