using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Tests.Scenarios;

public sealed class ScenarioCatalogTests
{
    [Fact]
    public void Default_HasOneScenarioPerSeedExperimentThenTheRealIoScenarios()
    {
        Assert.Equal(
            [
                "seed000-fanout500", "seed000-errors", "seed000-cancel", "seed001-io", "seed001-cpu", "seed002-channels", "seed003-sync-async", "seed004-mixed",
                "downstream-capacity", "downstream-rate-limit", "downstream-crash", "downstream-http-client", "price-sync", "hash-files",
                "downstream-fleet", "server-overload", "adaptive-incidents",
            ],
            ScenarioCatalog.Default.Scenarios.Select(s => s.Id));
    }

    [Fact]
    public void Select_UnknownId_NamesItAndListsTheValidChoices()
    {
        Assert.Null(ScenarioCatalog.Default.Select("seed999", out var error));
        Assert.Contains("'seed999'", error);
        Assert.Contains("all", error);
        Assert.Contains("seed004-mixed", error);
    }

    [Fact]
    public void Select_All_ReturnsEveryScenarioInOrder()
    {
        Assert.Equal(17, ScenarioCatalog.Default.Select("all", out _)!.Count);
    }

    [Theory]
    [InlineData(0.0)]
    [InlineData(-0.5)]
    [InlineData(1.5)]
    [InlineData(double.NaN)]
    public void ValidateScale_OutsideRange_ExplainsValidRange(double scale)
    {
        Assert.Contains("(0, 1]", ScenarioSize.ValidateScale(scale));
    }

    [Fact]
    public void Cases_EveryScenarioAtEverySize_PairsOnlyRunnableStrategiesAndWorkloads()
    {
        foreach (var scenario in ScenarioCatalog.Default.Scenarios)
        {
            foreach (var size in new[] { ScenarioSize.Default, new ScenarioSize(0.01), new ScenarioSize(1, Full: true) })
            {
                var cases = scenario.Cases(size);
                if (scenario is DownstreamFleetScenario && !FanOut.Redis.FleetWorker.LocalRedisServer.IsInstalled)
                {
                    continue; // documented: no cases without redis-server
                }

                Assert.NotEmpty(cases);
                Assert.All(cases, c => Assert.Null(c.Strategy.Refusal(c.CreateWorkload())));
            }
        }
    }

    [Fact]
    public void Cases_FullGrids_MatchTheSeeds()
    {
        var full = new ScenarioSize(1, Full: true);
        var byId = ScenarioCatalog.Default.Scenarios.ToDictionary(s => s.Id, s => s.Cases(full).Count);
        Assert.Equal(64, byId["seed001-io"]);     // 4 counts x 4 durations x (the seed's 2 strategies + FanOut fixed and adaptive)
        Assert.Equal(64, byId["seed001-cpu"]);    // 4 counts x 4 calculation counts x (2 + 2)
        Assert.Equal(40, byId["seed004-mixed"]);  // 2 x 2 x 2 x (the seed's 3 strategies + 2)
    }

    [Fact]
    public void Ms_ScaledNonZeroDelay_NeverBecomesZero()
    {
        var size = new ScenarioSize(0.001);
        Assert.Equal(1, size.Ms(20));
        Assert.Equal(0, size.Ms(0));
        Assert.Equal(100, size.Work(100_000));
    }
}
