using Spectre.Console;

namespace FanOut.Cli.Watch;

/// <summary><c>--json</c>: every event as one line (see <see cref="WatchJson"/>).</summary>
internal sealed class JsonOutput(IAnsiConsole console, WatchModel model) : WatchOutput(model)
{
    public override void Detached(WatchTarget target, string why) => Write(WatchJson.Detached(target, why));

    protected override void Begin(WatchTarget target) => Write(WatchJson.Attached(target, Model.IntervalSeconds));

    protected override void Show(WatchEvent e)
    {
        switch (e)
        {
            case LimitStateEvent state when Model.Rows.FirstOrDefault(r => r.Id == state.LimitId) is { } row:
                Write(WatchJson.State(state, row));
                break;
            case LimitChangedEvent change:
                Write(WatchJson.Change(change));
                break;
        }
    }

    // Plain text, never markup: a name may hold brackets.
    private void Write(string line) => console.Profile.Out.Writer.WriteLine(line);
}
