using FanOut.Lab.Scenarios;

namespace FanOut.Lab.Running;

/// <summary>The scenarios a published child (NativeAOT, trimmed) can run: built here, not through the catalog, so
/// publishing compiles in only their code (no HTTP server, no SQLite).</summary>
public static class PublishedScenarios
{
    private static readonly Func<Scenario>[] s_factories = [() => new Seed002ChannelsScenario()];

    /// <summary>The ids, for messages and checks.</summary>
    public static IReadOnlyList<string> Ids { get; } = s_factories.Select(f => f().Id).ToArray();

    /// <summary>The scenario named <paramref name="id"/>, or null when it cannot run published.</summary>
    public static Scenario? Find(string id) =>
        s_factories.Select(f => f()).FirstOrDefault(s => s.Id.Equals(id, StringComparison.OrdinalIgnoreCase));
}
