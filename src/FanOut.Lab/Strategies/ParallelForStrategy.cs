using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary><c>Parallel.For(0, n, options, body)</c> with a synchronous body (seed 002's "Parallel.For @ 4").</summary>
/// <param name="maxDegreeOfParallelism">The cap, or null for the default (-1).</param>
public sealed class ParallelForStrategy(int? maxDegreeOfParallelism = null) : Strategy
{
    private readonly int? _dop = maxDegreeOfParallelism is { } d ? CheckLimit(d, nameof(maxDegreeOfParallelism)) : null;

    /// <inheritdoc/>
    public override string Name => $"Parallel.For ({DopText(_dop)})";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Synchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _dop ?? itemCount);

    /// <inheritdoc/>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        var options = new ParallelOptions { MaxDegreeOfParallelism = _dop ?? -1, CancellationToken = cancellationToken };
        Parallel.For(0, items.Length, options, i => workload.Run(items[i]));
        return Task.CompletedTask;
    }
}
