namespace FanOut.Http.Tests.RateLimiting;

/// <summary>
/// Work in flight on two sides sharing one limit (a FanOutAsync loop, and a pipeline using the limit's RateLimiter): the
/// peak of their sum, and whether both sides ever ran at the same moment (without that, a peak within the limit proves nothing).
/// </summary>
internal sealed class SharedBudget
{
    /// <summary>A safety net so a broken wait fails the test instead of hanging the run; never an assertion on speed.</summary>
    public static readonly TimeSpan Hang = TimeSpan.FromSeconds(60);

    private readonly int[] _inFlight = new int[2];
    private readonly TaskCompletionSource[] _started = [new(TaskCreationOptions.RunContinuationsAsynchronously), new(TaskCreationOptions.RunContinuationsAsynchronously)];
    private readonly int[] _completed = new int[2];
    private int _total;
    private int _peak;
    private int _overlaps;

    public const int Loop = 0;
    public const int Pipeline = 1;

    public int Peak => Volatile.Read(ref _peak);

    /// <summary>How many times one side started work while the other had work in flight.</summary>
    public int Overlaps => Volatile.Read(ref _overlaps);

    public int Completed(int side) => Volatile.Read(ref _completed[side]);

    /// <summary>
    /// One unit of work on <paramref name="side"/>. Each side's first unit stays in flight until the other side has started,
    /// so the two sides overlap at least once whatever the scheduling; the rest yield for a millisecond or so.
    /// </summary>
    public async Task WorkAsync(int side, bool first, CancellationToken cancellationToken)
    {
        var total = Interlocked.Increment(ref _total);
        InterlockedMax(ref _peak, total);
        Interlocked.Increment(ref _inFlight[side]);
        if (Volatile.Read(ref _inFlight[1 - side]) > 0)
        {
            Interlocked.Increment(ref _overlaps);
        }

        _started[side].TrySetResult();
        try
        {
            if (first)
            {
                await _started[1 - side].Task.WaitAsync(Hang, cancellationToken);
            }
            else
            {
                await Task.Delay(1, cancellationToken);
            }
        }
        finally
        {
            Interlocked.Decrement(ref _inFlight[side]);
            Interlocked.Decrement(ref _total);
            Interlocked.Increment(ref _completed[side]);
        }
    }

    /// <summary>The FanOutAsync side: <paramref name="items"/> units under <paramref name="limit"/>.</summary>
    public Task RunLoopAsync(ConcurrencyLimit limit, int items) =>
        Enumerable.Range(0, items).FanOutAsync(
            (i, ct) => new ValueTask(WorkAsync(Loop, i == 0, ct)),
            new FanOutOptions { Limit = limit });

    /// <summary>
    /// Both sides at once, until all have completed (within <see cref="Hang"/>): the loop (<paramref name="loopItems"/> units
    /// under <paramref name="limit"/>) and <paramref name="calls"/> calls of the pipeline side, each on the pool
    /// (<paramref name="call"/> given its index; its work is <see cref="WorkAsync"/> on <see cref="Pipeline"/>).
    /// </summary>
    public Task RunBothSidesAsync(ConcurrencyLimit limit, int loopItems, int calls, Func<int, Task> call)
    {
        var loop = RunLoopAsync(limit, loopItems);
        var pipeline = Enumerable.Range(0, calls).Select(i => Task.Run(() => call(i)));
        return Task.WhenAll(pipeline.Append(loop)).WaitAsync(Hang);
    }

    public void AssertWithin(ConcurrencyLimit limit, int loopItems, int pipelineItems)
    {
        Assert.True(Completed(Loop) == loopItems && Completed(Pipeline) == pipelineItems, $"completed {Completed(Loop)} of {loopItems} in the loop, {Completed(Pipeline)} of {pipelineItems} in the pipeline");
        Assert.True(Overlaps > 0, "the two sides never ran at the same time");
        Assert.True(Peak <= limit.Peak, $"peak {Peak} in flight across both sides, above the limit {limit.Peak}");
        Assert.True(Peak >= 2, $"peak {Peak}: nothing ran concurrently");
        Assert.Equal(0, limit.InFlight);
    }

    private static void InterlockedMax(ref int location, int value)
    {
        var seen = Volatile.Read(ref location);
        while (value > seen)
        {
            var previous = Interlocked.CompareExchange(ref location, value, seen);
            if (previous == seen)
            {
                return;
            }

            seen = previous;
        }
    }
}
