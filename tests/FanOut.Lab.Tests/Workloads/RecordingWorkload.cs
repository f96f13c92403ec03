using FanOut.Lab.Workloads;

namespace FanOut.Lab.Tests.Workloads;

/// <summary>A test workload that waits a little (async or blocking) and counts how often each index ran.</summary>
public sealed class RecordingWorkload(int itemCount, int waitMs) : Workload
{
    private readonly int[] _runs = new int[itemCount];

    public override string Name => $"recording({waitMs}ms)";

    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object> { ["waitMs"] = waitMs };

    public override WorkloadForms Forms => WorkloadForms.Both;

    public override WorkProfile Profile => new(Enumerable.Repeat(waitMs, itemCount).ToArray(), UsesCpu: false);

    /// <summary>How many times each index ran.</summary>
    public IReadOnlyList<int> Runs => _runs;

    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        using var scope = Probe.Enter();
        Interlocked.Increment(ref _runs[index]);
        await Task.Delay(waitMs, cancellationToken);
    }

    public override void Run(int index)
    {
        using var scope = Probe.Enter();
        Interlocked.Increment(ref _runs[index]);
        Thread.Sleep(waitMs);
    }
}
