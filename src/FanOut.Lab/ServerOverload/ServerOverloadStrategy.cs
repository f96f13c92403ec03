using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;

namespace FanOut.Lab.ServerOverload;

/// <summary>
/// One row of the server-overload table as a lab strategy: starts the Kestrel app protected as <see cref="Row"/> says,
/// runs every load step of a <see cref="ServerOverloadWorkload"/> against it in order (one app, so an adaptive limit
/// carries what it learned from one step into the next, as a real service's would), and stops it.
/// </summary>
public sealed class ServerOverloadStrategy(OverloadRow row) : Strategy
{
    private OverloadApp? _app;
    private LimitReading? _lastLimit;

    /// <summary>The protection.</summary>
    public OverloadRow Row { get; } = row ?? throw new ArgumentNullException(nameof(row));

    /// <inheritdoc/>
    public override string Name => Row.Name;

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    /// <remarks>The server's bound on requests in flight: the permits of a fixed limiter, else none the client sees.</remarks>
    public override int ConcurrencyFor(int itemCount) => Row.Permits > 0 ? Row.Permits : itemCount;

    /// <inheritdoc/>
    public override bool LimitMoves => Row.Kind is OverloadRowKind.FanOutAdaptive or OverloadRowKind.FanOutPriorities;

    /// <inheritdoc/>
    public override int? LimitNow => Volatile.Read(ref _app)?.Limit?.Current;

    /// <inheritdoc/>
    public override LimitReading? LastLimit => _lastLimit;

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        if (workload is not ServerOverloadWorkload sweep)
        {
            throw new ArgumentException($"{Name} runs only {nameof(ServerOverloadWorkload)}.", nameof(workload));
        }

        await using var app = await OverloadApp.StartAsync(Row, sweep.Backend).ConfigureAwait(false);
        Volatile.Write(ref _app, app);
        sweep.Serving(app);
        try
        {
            foreach (var load in sweep.Loads)
            {
                cancellationToken.ThrowIfCancellationRequested();
                var cell = await ServerOverloadRun.RunLoadAsync(Row, app, load * sweep.Backend.CapacityPerSecond, load, sweep.Warmup, sweep.Measured, sweep.Slo, sweep.Live).ConfigureAwait(false);
                sweep.Add(cell);
            }

            _lastLimit = app.Limit is { } limit ? new LimitReading(limit.Current, limit.Peak) : null;
        }
        finally
        {
            sweep.Serving(null);
            Volatile.Write(ref _app, null);
        }
    }
}
