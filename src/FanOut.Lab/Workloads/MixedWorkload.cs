namespace FanOut.Lab.Workloads;

/// <summary>Seed 004's item: four CPU loops (<c>sum += i</c> x WorkCount) with three <c>Task.Delay(IoDelayMs)</c> between.</summary>
/// <remarks>
/// <c>Task.Delay(0)</c> returns a completed task, so with IoDelayMs = 0 the item never yields and a plain
/// projection runs every item on the caller's thread: that is the seed's finding, kept on purpose.
/// </remarks>
public sealed class MixedWorkload : Workload
{
    private const int CpuSegments = 4;
    private readonly int _workCount;
    private readonly int _ioDelayMs;
    private readonly int[] _waits;

    /// <summary>Creates the item for <paramref name="itemCount"/> items.</summary>
    public MixedWorkload(int workCount, int ioDelayMs, int itemCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(workCount);
        ArgumentOutOfRangeException.ThrowIfNegative(ioDelayMs);
        _workCount = workCount;
        _ioDelayMs = ioDelayMs;
        _waits = ioDelayMs == 0 ? [] : Enumerable.Repeat((CpuSegments - 1) * ioDelayMs, itemCount).ToArray();
    }

    /// <inheritdoc/>
    public override string Name => $"4 x sum({_workCount:N0}) + 3 x Task.Delay({_ioDelayMs}ms)";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object>
    {
        ["workCount"] = _workCount,
        ["ioDelayMs"] = _ioDelayMs,
    };

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    public override WorkProfile Profile => new(_waits, UsesCpu: true);

    /// <inheritdoc/>
    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        using var scope = Probe.Enter();
        long sum = 0;
        for (var segment = 0; segment < CpuSegments; segment++)
        {
            if (segment > 0)
            {
                await Task.Delay(_ioDelayMs, cancellationToken).ConfigureAwait(false);
            }

            sum += SumLoopWorkload.Sum(_workCount);
        }

        CpuSink.Keep(sum);
    }

    /// <inheritdoc/>
    public override void RunCpuPart(int index)
    {
        long sum = 0;
        for (var segment = 0; segment < CpuSegments; segment++)
        {
            sum += SumLoopWorkload.Sum(_workCount);
        }

        CpuSink.Keep(sum);
    }
}
