using System.Diagnostics.Tracing;
using System.Globalization;
using System.Net.Sockets;
using System.Threading.Channels;

using FanOut.Diagnostics;

using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;

namespace FanOut.Cli.Watch;

/// <summary>
/// An EventPipe session on a watched process's "FanOut" event source (limit states once per interval, and every change):
/// its events arrive on <see cref="Events"/>, which completes when the process exits or the session is disposed.
/// </summary>
internal sealed class FanOutEventSession : IAsyncDisposable
{
    /// <summary>Events not yet read are dropped oldest first beyond this many (a reader that stalls never makes the watcher grow).</summary>
    private const int BufferedEvents = 10_000;

    /// <summary>How long a detach waits for the process to stop the session, then for its stream to end.</summary>
    private static readonly TimeSpan StopWait = TimeSpan.FromSeconds(10);

    private readonly EventPipeSession _session;
    private readonly Channel<WatchEvent> _events = Channel.CreateBounded<WatchEvent>(
        new BoundedChannelOptions(BufferedEvents) { FullMode = BoundedChannelFullMode.DropOldest, SingleReader = true, SingleWriter = true });

    private readonly Task _processing;
    private int _disposed;

    private FanOutEventSession(EventPipeSession session)
    {
        _session = session;
        _processing = Task.Factory.StartNew(Process, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
    }

    /// <summary>The process's events, in the order it wrote them; completes when the process exits or the session stops.</summary>
    public ChannelReader<WatchEvent> Events => _events.Reader;

    /// <summary>Starts a session on <paramref name="target"/>, or returns null with the one line that says why it cannot.</summary>
    public static FanOutEventSession? Start(WatchTarget target, TimeSpan interval, out string? error)
    {
        error = null;
        var provider = new EventPipeProvider(
            FanOutEvents.SourceName,
            EventLevel.Informational,
            FanOutEvents.LimitStatesKeyword | FanOutEvents.LimitChangesKeyword,
            new Dictionary<string, string> { [FanOutEvents.StateIntervalArgument] = interval.TotalSeconds.ToString(CultureInfo.InvariantCulture) });
        try
        {
            var session = new DiagnosticsClient(target.ProcessId).StartEventPipeSession([provider], requestRundown: false, circularBufferMB: 16);
            return new FanOutEventSession(session);
        }
        catch (UnauthorizedAccessException)
        {
            error = $"not permitted to attach to process {target}: run fanout watch as the user that runs the process (or as root).";
        }
        catch (ServerNotAvailableException ex) when (ex.InnerException is SocketException { SocketErrorCode: SocketError.AccessDenied })
        {
            error = $"not permitted to attach to process {target}: run fanout watch as the user that runs the process (or as root).";
        }
        catch (ServerNotAvailableException)
        {
            error = $"process {target} did not answer on its diagnostics port: it exited, or it runs with DOTNET_EnableDiagnostics=0.";
        }
        catch (DiagnosticsClientException ex)
        {
            error = $"process {target} refused the session ({ex.Message.TrimEnd('.')}).";
        }
        catch (IOException ex)
        {
            error = $"could not reach process {target} ({ex.Message.TrimEnd('.')}).";
        }

        return null;
    }

    /// <summary>Stops the session (the process keeps running, unaware but for the interval's timer stopping) and waits for the reader.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // A detach is bounded: a process too busy to answer the stop (or to end its stream) is left to it, and the stream closed
        // from this side ends the reader.
        using (var stopping = new CancellationTokenSource(StopWait))
        {
            try
            {
                await _session.StopAsync(stopping.Token).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is ServerNotAvailableException or IOException or DiagnosticsClientException or ObjectDisposedException or EndOfStreamException or OperationCanceledException or TimeoutException)
            {
                // The process is gone (its stream has ended, or is about to, without us), or did not answer in time.
            }
        }

        await _processing.WaitAsync(StopWait).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _session.Dispose();
        await _processing.WaitAsync(StopWait).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _events.Writer.TryComplete(); // the reader's thread may still be inside a read the closed stream has not ended: its events are not wanted
    }

    private void Process()
    {
        try
        {
            using var source = new EventPipeEventSource(_session.EventStream);
            source.Dynamic.All += OnEvent;
            source.Process();
        }
        catch (Exception ex) when (ex is IOException or EndOfStreamException or ObjectDisposedException or ServerNotAvailableException)
        {
            // The process exited mid-event: the stream ends here.
        }
        finally
        {
            _events.Writer.TryComplete();
        }
    }

    private void OnEvent(TraceEvent e)
    {
        if (!string.Equals(e.ProviderName, FanOutEvents.SourceName, StringComparison.Ordinal))
        {
            return;
        }

        var seconds = e.TimeStampRelativeMSec / 1000;
        WatchEvent? read = (int)e.ID switch
        {
            FanOutEvents.LimitStateId => new LimitStateEvent(
                seconds, Long(e, "limitId"), Text(e, "kind"), Text(e, "name"), Int(e, "limit"), Int(e, "inFlight"), Int(e, "waiting"),
                Double(e, "latencyMs"), Double(e, "baselineMs"), Long(e, "overloads"), Long(e, "pauses"), Long(e, "changes")),
            FanOutEvents.LimitChangedId => new LimitChangedEvent(
                seconds, Long(e, "limitId"), Text(e, "kind"), Text(e, "name"), Int(e, "from"), Int(e, "to"), Text(e, "reason"),
                Double(e, "windowMedianMs"), Double(e, "baselineMs"), Int(e, "inFlight"), Long(e, "sequence")),
            FanOutEvents.LimitsWatchedId => new IntervalClosedEvent(seconds, Int(e, "limits"), Double(e, "intervalSeconds")),
            _ => null,
        };
        if (read is not null)
        {
            _events.Writer.TryWrite(read);
        }
    }

    // A field the process's FanOut does not send (an older version) reads as 0 or empty.
    private static long Long(TraceEvent e, string name) => e.PayloadByName(name) is { } v ? Convert.ToInt64(v, CultureInfo.InvariantCulture) : 0;

    private static int Int(TraceEvent e, string name) => e.PayloadByName(name) is { } v ? Convert.ToInt32(v, CultureInfo.InvariantCulture) : 0;

    private static double Double(TraceEvent e, string name) => e.PayloadByName(name) is { } v ? Convert.ToDouble(v, CultureInfo.InvariantCulture) : 0;

    private static string Text(TraceEvent e, string name) => e.PayloadByName(name) as string ?? string.Empty;
}
