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
        new ServerOverloadScenario(),
        new AdaptiveIncidentsScenario(),
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

        var near = NearestId(idOrAll);
        error = $"unknown scenario '{idOrAll}': {(near is null ? string.Empty : $"did you mean {near}? ")}choose one of {All}, {string.Join(", ", _scenarios.Select(s => s.Id))}.";
        return null;
    }

    /// <summary>The id a typo most likely meant: the closest by edit distance, when at most a quarter of its letters (and at
    /// least 2) differ, or the one id that starts with <paramref name="typed"/>; null when nothing is that close.</summary>
    public string? NearestId(string typed)
    {
        ArgumentNullException.ThrowIfNull(typed);
        var lower = typed.ToLowerInvariant();
        var (id, distance) = _scenarios.Select(s => (s.Id, Distance: EditDistance(lower, s.Id))).MinBy(x => x.Distance);
        if (distance <= Math.Max(2, id.Length / 4))
        {
            return id;
        }

        var starting = _scenarios.Where(s => lower.Length >= 3 && s.Id.StartsWith(lower, StringComparison.Ordinal)).ToArray();
        return starting.Length == 1 ? starting[0].Id : null;
    }

    /// <summary>Levenshtein distance: insertions, deletions and substitutions, each costing one.</summary>
    private static int EditDistance(string a, string b)
    {
        var previous = Enumerable.Range(0, b.Length + 1).ToArray();
        var current = new int[b.Length + 1];
        for (var i = 1; i <= a.Length; i++)
        {
            current[0] = i;
            for (var j = 1; j <= b.Length; j++)
            {
                current[j] = Math.Min(Math.Min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
            }

            (previous, current) = (current, previous);
        }

        return previous[b.Length];
    }
}
