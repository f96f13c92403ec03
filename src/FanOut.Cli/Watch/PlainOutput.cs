using Spectre.Console;

namespace FanOut.Cli.Watch;

/// <summary>Output redirected without <c>--json</c>: every decision as a line, and each interval's limits as one line each.</summary>
internal sealed class PlainOutput(IAnsiConsole console, WatchModel model) : WatchOutput(model)
{
    public override void Detached(WatchTarget target, string why) =>
        Write(why == "exited" ? $"process {target} exited." : $"stopped watching process {target}.");

    protected override void Begin(WatchTarget target) =>
        Write($"watching process {target}: limit states every {WatchView.Number(Model.IntervalSeconds)} s, decisions as they come. Ctrl+C stops.");

    protected override void Show(WatchEvent e)
    {
        switch (e)
        {
            case LimitChangedEvent d:
                Write($"{WatchView.Clock(d.Seconds)}  {d.Name}  {WatchView.Decision(d)}  {WatchView.Evidence(d)}");
                break;
            case IntervalClosedEvent closed:
                foreach (var row in Model.Rows.Where(r => r.LastInterval == Model.Intervals - 1))
                {
                    Write($"{WatchView.Clock(closed.Seconds)}  {row.Name} ({row.Kind}): limit {row.Limit}, {row.InFlight} in flight, {row.Waiting} waiting, latency {WatchView.Latency(row)}, {WatchView.Number(row.OverloadsPerSecond)} overloads/s, {WatchView.Number(row.PausesPerSecond)} pauses/s");
                }

                break;
        }
    }

    private void Write(string line) => console.Profile.Out.Writer.WriteLine(line);
}
