using System.Threading.Channels;

using Spectre.Console;

namespace FanOut.Cli.Watch;

/// <summary>A terminal: the live view (<see cref="WatchView"/>), redrawn at most four times a second; ↑/↓ choose the charted limit, q quits.</summary>
internal sealed class LiveOutput(IAnsiConsole console, WatchTarget target, WatchModel model) : WatchOutput(model)
{
    private static readonly TimeSpan Redraw = TimeSpan.FromMilliseconds(250);

    public override async Task<bool> RunAsync(ChannelReader<WatchEvent> events, CancellationToken cancellationToken)
    {
        var exited = false;
        await console.Live(WatchView.Render(target, Model)).AutoClear(false).Overflow(VerticalOverflow.Ellipsis).StartAsync(async live =>
        {
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    var more = events.WaitToReadAsync(stop.Token).AsTask();
                    await Task.WhenAny(more, Task.Delay(Redraw, stop.Token)).ConfigureAwait(false);
                    if (more.IsCompletedSuccessfully && !more.Result)
                    {
                        exited = true;
                        break;
                    }
                }
                catch (OperationCanceledException)
                {
                    break;
                }

                while (events.TryRead(out var e))
                {
                    Model.Apply(e);
                }

                ReadKeys(stop);
                live.UpdateTarget(WatchView.Render(target, Model));
                live.Refresh();
            }

            live.UpdateTarget(WatchView.Render(target, Model));
        }).ConfigureAwait(false);
        return exited;
    }

    public override void Detached(WatchTarget target, string why) =>
        console.MarkupLine(why == "exited" ? $"process {Markup.Escape(target.ToString())} exited." : $"stopped watching process {Markup.Escape(target.ToString())}.");

    protected override void Begin(WatchTarget target)
    {
    }

    protected override void Show(WatchEvent e)
    {
    }

    private void ReadKeys(CancellationTokenSource stop)
    {
        if (Console.IsInputRedirected)
        {
            return;
        }

        while (Console.KeyAvailable)
        {
            switch (Console.ReadKey(intercept: true).Key)
            {
                case ConsoleKey.UpArrow:
                    Model.Select(-1);
                    break;
                case ConsoleKey.DownArrow:
                case ConsoleKey.Tab:
                    Model.Select(1);
                    break;
                case ConsoleKey.Q:
                    stop.Cancel();
                    break;
            }
        }
    }
}
