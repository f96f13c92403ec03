using System.Text.Json;

namespace FanOut.Cli.Watch;

/// <summary><c>fanout watch --json</c>: one JSON object per line, <c>"event"</c> first: attached, state, change, detached.</summary>
internal static class WatchJson
{
    public static string Attached(WatchTarget target, double intervalSeconds) => Line(w =>
    {
        w.WriteString("event", "attached");
        w.WriteNumber("processId", target.ProcessId);
        w.WriteString("process", target.Name);
        w.WriteNumber("intervalSeconds", intervalSeconds);
    });

    /// <summary>A limit's state, with its overloads and pauses per second since its last state (from <paramref name="row"/>).</summary>
    public static string State(LimitStateEvent s, LimitRow row) => Line(w =>
    {
        Limit(w, "state", s.Seconds, s.LimitId, s.Kind, s.Name);
        w.WriteNumber("limit", s.Limit);
        w.WriteNumber("inFlight", s.InFlight);
        w.WriteNumber("waiting", s.Waiting);
        if (row.LatencyMs is { } latency)
        {
            w.WriteNumber("latencyMs", Math.Round(latency, 3));
        }

        if (row.BaselineMs is { } baseline)
        {
            w.WriteNumber("baselineMs", Math.Round(baseline, 3));
        }

        w.WriteNumber("overloadsPerSecond", Math.Round(row.OverloadsPerSecond, 3));
        w.WriteNumber("pausesPerSecond", Math.Round(row.PausesPerSecond, 3));
        w.WriteNumber("overloads", s.Overloads);
        w.WriteNumber("pauses", s.Pauses);
        w.WriteNumber("changes", s.Changes);
    });

    public static string Change(LimitChangedEvent c) => Line(w =>
    {
        Limit(w, "change", c.Seconds, c.LimitId, c.Kind, c.Name);
        w.WriteNumber("from", c.From);
        w.WriteNumber("to", c.To);
        w.WriteString("reason", c.Reason);
        w.WriteNumber("windowMedianMs", Math.Round(c.WindowMedianMs, 3));
        w.WriteNumber("baselineMs", Math.Round(c.BaselineMs, 3));
        w.WriteNumber("inFlight", c.InFlight);
        w.WriteNumber("sequence", c.Sequence);
    });

    /// <summary>The last line: why the watch ended (<c>exited</c>: the process; <c>stopped</c>: Ctrl+C or SIGTERM).</summary>
    public static string Detached(WatchTarget target, string why) => Line(w =>
    {
        w.WriteString("event", "detached");
        w.WriteNumber("processId", target.ProcessId);
        w.WriteString("why", why);
    });

    /// <summary>The fields every line about one limit starts with.</summary>
    private static void Limit(Utf8JsonWriter w, string kindOfEvent, double seconds, long limitId, string kind, string name)
    {
        w.WriteString("event", kindOfEvent);
        w.WriteNumber("seconds", Math.Round(seconds, 3));
        w.WriteNumber("limitId", limitId);
        w.WriteString("kind", kind);
        w.WriteString("name", name);
    }

    private static string Line(Action<Utf8JsonWriter> write)
    {
        using var buffer = new MemoryStream();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            write(writer);
            writer.WriteEndObject();
        }

        return System.Text.Encoding.UTF8.GetString(buffer.ToArray());
    }
}
