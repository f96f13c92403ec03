namespace FanOut.Lab.Scenarios;

/// <summary>Every scenario the lab knows, in the order <c>fanout run all</c> runs them.</summary>
public sealed class ScenarioCatalog
{
    /// <summary>The word that selects every scenario.</summary>
    public const string All = "all";

    private readonly IReadOnlyList<Scenario> _scenarios;

    /// <summary>A catalog of <paramref name="scenarios"/>.</summary>
    public ScenarioCatalog(IReadOnlyList<Scenario> scenarios)
    {
        ArgumentNullException.ThrowIfNull(scenarios);
        _scenarios = scenarios;
    }

    /// <summary>The seed scenarios, then the real-I/O scenarios (a loopback HTTP server, SQLite, files).</summary>
    public static ScenarioCatalog Default { get; } = new(
    [
        new Seed000FanOut500Scenario(),
        new Seed000ErrorsScenario(),
        new Seed000CancelScenario(),
        new Seed001IoScenario(),
        new Seed001CpuScenario(),
        new Seed002ChannelsScenario(),
        new Seed003SyncAsyncScenario(),
        new Seed004MixedScenario(),
        new DownstreamCapacityScenario(),
        new DownstreamRateLimitScenario(),
        new DownstreamCrashScenario(),
        new DownstreamHttpClientScenario(),
        new PriceSyncScenario(),
        new HashFilesScenario(),
        new DownstreamFleetScenario(),
    ]);

    /// <summary>The scenarios.</summary>
    public IReadOnlyList<Scenario> Scenarios => _scenarios;

    /// <summary>The scenarios <paramref name="idOrAll"/> names, or null with <paramref name="error"/> naming the valid choices.</summary>
    public IReadOnlyList<Scenario>? Select(string idOrAll, out string? error)
    {
        ArgumentNullException.ThrowIfNull(idOrAll);
        error = null;
        if (idOrAll.Equals(All, StringComparison.OrdinalIgnoreCase))
        {
            return _scenarios;
        }

        var match = _scenarios.FirstOrDefault(s => s.Id.Equals(idOrAll, StringComparison.OrdinalIgnoreCase));
        if (match is not null)
        {
            return [match];
        }

        error = $"unknown scenario '{idOrAll}': choose one of {All}, {string.Join(", ", _scenarios.Select(s => s.Id))}.";
        return null;
    }
}
