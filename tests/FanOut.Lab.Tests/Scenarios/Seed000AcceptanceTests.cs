using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>The measured peaks the lab issue names for seed000, at a small scale: 500 for WhenAll, ProcessorCount for the default, 50 for DOP 50.</summary>
[Collection(Strategies.SequentialCollection.Name)]
public sealed class Seed000AcceptanceTests
{
    private static readonly RunPolicy s_once = new(0, 1, 1, TimeSpan.Zero);

    [Theory]
    [InlineData(0, "Task.WhenAll", 500)]
    [InlineData(2, "Parallel.ForEachAsync (DOP 50)", 50)]
    [InlineData(3, "SemaphoreSlim(50) + WhenAll", 50)]
    public void Run_Seed000Case_MeasuresTheExpectedPeak(int index, string strategy, int peak)
    {
        var labCase = new Seed000FanOut500Scenario().Cases(new ScenarioSize(0.05))[index];
        var result = new InProcessCaseRunner(s_once).Run(labCase);
        Assert.Equal(strategy, result.Strategy);
        Assert.Equal(peak, result.PeakInFlight);
        Assert.Equal(500, result.ItemsStarted);
    }

    [Fact]
    public void Run_Seed000DefaultForEachAsync_PeakIsProcessorCount()
    {
        var labCase = new Seed000FanOut500Scenario().Cases(new ScenarioSize(0.05))[1];
        var result = new InProcessCaseRunner(s_once).Run(labCase);
        Assert.Equal("Parallel.ForEachAsync (default)", result.Strategy);
        Assert.Equal(Environment.ProcessorCount, result.PeakInFlight);
    }
}
