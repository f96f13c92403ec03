namespace FanOut.Lab.Tests.Strategies;

/// <summary>Tests that assert how much concurrency a strategy reaches run alone: other tests running at the same
/// time take the thread pool's few threads on 2 cores, and a Parallel.For worker that cannot get one leaves the
/// caller running alone (peak 1 where 2 is due).</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class SequentialCollection
{
    public const string Name = "Runs alone";
}
