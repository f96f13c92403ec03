using FanOut.Lab.Workloads;

namespace FanOut.Lab.Strategies;

/// <summary><c>await Parallel.ForEachAsync(items, options, body)</c>.</summary>
/// <param name="maxDegreeOfParallelism">The cap, or null for the default, which is <see cref="Environment.ProcessorCount"/>.</param>
public sealed class ParallelForEachAsyncStrategy(int? maxDegreeOfParallelism = null) : Strategy
{
    private readonly int? _dop = maxDegreeOfParallelism is { } d ? CheckLimit(d, nameof(maxDegreeOfParallelism)) : null;

    /// <inheritdoc/>
    public override string Name => $"Parallel.ForEachAsync ({DopText(_dop)})";

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, _dop ?? Environment.ProcessorCount);

    /// <inheritdoc/>
    public override Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        // Leaving MaxDegreeOfParallelism unset (not -1) is what "default" means to the seeds.
        var options = _dop is { } dop
            ? new ParallelOptions { MaxDegreeOfParallelism = dop, CancellationToken = cancellationToken }
            : new ParallelOptions { CancellationToken = cancellationToken };
        return Parallel.ForEachAsync(items, options, workload.RunAsync);
    }
}
