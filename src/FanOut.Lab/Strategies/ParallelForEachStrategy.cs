using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary><c>Parallel.ForEach(items, options, body)</c> with a synchronous body; blocks the caller, which takes part.</summary>
/// <param name="maxDegreeOfParallelism">The cap, or null for the default (-1: as many as the scheduler gives).</param>
public sealed class ParallelForEachStrategy(int? maxDegreeOfParallelism = null) : Strategy
{
    private readonly int? _dop = maxDegreeOfParallelism is { } d ? CheckLimit(d, nameof(maxDegreeOfParallelism)) : null;

    /// <inheritdoc/>
    public override string Name => $"Parallel.ForEach ({DopText(_dop)})";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Synchronous;

    /// <inheritdoc/>
    /// <remarks>The default is unbounded as far as the API goes; the thread pool's injection rate is what
    /// really caps it, and the efficiency column shows that cost.</remarks>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _dop ?? itemCount);

    /// <inheritdoc/>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        var options = new ParallelOptions { MaxDegreeOfParallelism = _dop ?? -1, CancellationToken = cancellationToken };
        Parallel.ForEach(items, options, workload.Run);
        return Task.CompletedTask;
    }
}
