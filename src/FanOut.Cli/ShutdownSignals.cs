using System.Runtime.InteropServices;

namespace FanOut.Cli;

/// <summary>The one place the CLI turns Ctrl+C (SIGINT) and SIGTERM into a graceful stop of every long-running command.</summary>
/// <remarks>
/// The first signal cancels <see cref="Token"/> and keeps the process alive, so <c>serve</c> stops its server, <c>run</c>
/// saves the finished cases and <c>probe</c> writes the levels it measured, exactly as on Ctrl+C. A second signal is left
/// to the runtime's default (the process ends at once), for a command that does not stop quickly enough.
/// Without this, SIGTERM (<c>kill PID</c>, a container stop, a test harness) was ignored while the command ran.
/// </remarks>
public sealed class ShutdownSignals : IDisposable
{
    private readonly CancellationTokenSource _cancel = new();
    private readonly PosixSignalRegistration[] _registrations;
    private int _received;

    /// <summary>Starts listening for SIGINT and SIGTERM.</summary>
    public ShutdownSignals()
    {
        _registrations =
        [
            PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal),
            PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal),
        ];
    }

    /// <summary>Cancelled by the first SIGINT or SIGTERM.</summary>
    public CancellationToken Token => _cancel.Token;

    /// <inheritdoc/>
    public void Dispose()
    {
        foreach (var registration in _registrations)
        {
            registration.Dispose();
        }

        _cancel.Dispose();
    }

    private void OnSignal(PosixSignalContext context)
    {
        if (Interlocked.Increment(ref _received) == 1)
        {
            // Keep the process alive: the command sees the token and stops cleanly.
            context.Cancel = true;
            _cancel.Cancel();
        }
    }
}
