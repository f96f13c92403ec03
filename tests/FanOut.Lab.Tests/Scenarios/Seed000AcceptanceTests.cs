using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>The measured peaks the lab issue names for seed000: 500 for WhenAll, ProcessorCount for the default, 50 for DOP 50.</summary>
/// <remarks>
/// A peak is reached only while the items started first are still waiting: at the full 20 ms wait, not a scaled-down 1 ms
/// one (which read 408 of 500 for WhenAll once, with other test assemblies on the cores), and alone (Category=Serial),
/// as the lab's other tests that time real waits.
/// </remarks>
[Collection(Strategies.SequentialCollection.Name)]
[Trait(Probing.SerialTests.Category, Probing.SerialTests.Serial)]
public sealed class Seed000AcceptanceTests
{
    private static readonly RunPolicy s_once = new(0, 1, 1, TimeSpan.Zero);

    /// <summary>The scenario's own 20 ms waits (a 500-item WhenAll starts well within one).</summary>
    private static readonly ScenarioSize s_fullWaits = new(1);

    [Theory]
    [InlineData(0, "Task.WhenAll", 500)]
    [InlineData(2, "Parallel.ForEachAsync (DOP 50)", 50)]
    [InlineData(3, "SemaphoreSlim(50) + WhenAll", 50)]
    public void Run_Seed000Case_MeasuresTheExpectedPeak(int index, string strategy, int peak)
    {
        var labCase = new Seed000FanOut500Scenario().Cases(s_fullWaits)[index];
        var result = new InProcessCaseRunner(s_once).Run(labCase);
        Assert.Equal(strategy, result.Strategy);
        Assert.Equal(peak, result.PeakInFlight);
        Assert.Equal(500, result.ItemsStarted);
    }

    [Fact]
    public void Run_Seed000DefaultForEachAsync_PeakIsProcessorCount()
    {
        var labCase = new Seed000FanOut500Scenario().Cases(s_fullWaits)[1];
        var result = new InProcessCaseRunner(s_once).Run(labCase);
        Assert.Equal("Parallel.ForEachAsync (default)", result.Strategy);
        Assert.Equal(Environment.ProcessorCount, result.PeakInFlight);
    }
}
