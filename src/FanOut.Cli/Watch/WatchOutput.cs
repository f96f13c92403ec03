using System.Threading.Channels;

namespace FanOut.Cli.Watch;

/// <summary>Where <c>fanout watch</c> shows what it reads: the live view, plain lines, or JSON lines.</summary>
internal abstract class WatchOutput(WatchModel model)
{
    private readonly List<WatchEvent> _early = [];

    protected WatchModel Model { get; } = model;

    /// <summary>Keeps an event read before FanOut answered (already applied to the model), to show once attached.</summary>
    public void Buffer(WatchEvent e) => _early.Add(e);

    /// <summary>Says what is watched, then shows the events read while attaching.</summary>
    public void Attached(WatchTarget target)
    {
        Begin(target);
        foreach (var e in _early)
        {
            Show(e);
        }

        _early.Clear();
    }

    /// <summary>Shows events until the process exits (true) or <paramref name="cancellationToken"/> stops the watch (false).</summary>
    public virtual async Task<bool> RunAsync(ChannelReader<WatchEvent> events, CancellationToken cancellationToken)
    {
        try
        {
            await foreach (var e in events.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                // Ctrl+C stops the watch at once, also while events keep coming (the reader checks its token only when it runs dry).
                cancellationToken.ThrowIfCancellationRequested();
                Model.Apply(e);
                Show(e);
            }

            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>Says why the watch ended: <c>exited</c> or <c>stopped</c>.</summary>
    public abstract void Detached(WatchTarget target, string why);

    protected abstract void Begin(WatchTarget target);

    /// <summary>Shows one event, already applied to the model.</summary>
    protected abstract void Show(WatchEvent e);
}
