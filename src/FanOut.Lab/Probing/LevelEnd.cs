namespace FanOut.Lab.Probing;

/// <summary>The values of <see cref="LevelResult.EndedBy"/>.</summary>
public static class LevelEnd
{
    /// <summary>The level ran its planned length.</summary>
    public const string Measured = "measured";

    /// <summary><c>--max-requests</c> was spent during the level.</summary>
    public const string MaxRequests = "max-requests";

    /// <summary><c>--duration</c> ran out during the level.</summary>
    public const string Duration = "duration";

    /// <summary><c>--max-rate</c> held the level's offered load down: the level measured the pace, not the server.</summary>
    public const string MaxRate = "max-rate";

    /// <summary>Ctrl+C or SIGTERM during the level.</summary>
    public const string Interrupted = "interrupted";
}
