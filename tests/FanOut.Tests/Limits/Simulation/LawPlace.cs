namespace FanOut.Tests.Limits.Simulation;

/// <summary>
/// Issue 29 item 3, one law: each place FanOut's adaptive limit works, with that place's parameters, so that one simulation
/// suite runs every scenario against each. The fleet's Redis budget runs the same scripts (DownstreamScript) in
/// FanOut.Redis.Tests' FleetIncidentScenarioTests, on a redis-server that follows the simulation's fake clock.
/// </summary>
/// <param name="Name">The place.</param>
/// <param name="Options">Its limit's options (the simulation's clock is added).</param>
/// <param name="CallSize">Items per call: a fan-out is one call of all its items; a shared limit serves many short calls.</param>
public sealed record LawPlace(string Name, AdaptiveLimitOptions Options, int CallSize)
{
    /// <summary>Every place.</summary>
    public static readonly LawPlace[] All =
    [
        // FanOutAsync given no limit: a fresh ConcurrencyLimit.Adaptive() per call.
        new("loop", new AdaptiveLimitOptions(), int.MaxValue),

        // AddFanOutLimit()'s per-host limit: FanOutHttpOptions.DefaultLimitOptions (BackoffRatio 0.9: it sees every 429 of a
        // host; SlowStartPace 1: its growth requests open connections, and the "no" to them comes a connect later).
        new("http", FanOut.Http.FanOutHttpOptions.DefaultLimitOptions, int.MaxValue),

        // One ConcurrencyLimit.Adaptive() passed to many short fan-outs, one after the other (100 items each).
        new("shared", new AdaptiveLimitOptions(), 100),

        // FanOut.AspNetCore's RequestAdmission: FanOutConcurrencyOptions.DefaultLimitOptions (the core law started at 4), one
        // permit per request.
        new("server", FanOut.AspNetCore.FanOutConcurrencyOptions.DefaultLimitOptions, int.MaxValue),
    ];

    /// <summary>The place named <paramref name="name"/>.</summary>
    public static LawPlace Named(string name) => All.Single(p => p.Name == name);

    /// <summary>The places' names, for a [Theory].</summary>
    public static TheoryData<string> Names() => new(All.Select(p => p.Name));

    /// <summary>Every place's name with each of <paramref name="values"/>, for a [Theory] over places and one parameter.</summary>
    public static TheoryData<string, int> NamesWith(params int[] values)
    {
        var data = new TheoryData<string, int>();
        foreach (var place in All)
        {
            foreach (var value in values)
            {
                data.Add(place.Name, value);
            }
        }

        return data;
    }

    /// <summary>A fresh limit of this place on <paramref name="simulation"/>'s clock.</summary>
    public ConcurrencyLimit Create(LimitSimulation simulation) => ConcurrencyLimit.Adaptive(simulation.Options(Options));

    public override string ToString() => Name;
}
