using FanOut.Lab.ServerOverload;

namespace FanOut.AspNetCore.Tests.RealServers;

/// <summary>A test that starts its own PostgreSQL: skipped, with the install line, where it cannot.</summary>
public sealed class PostgresFactAttribute : FactAttribute
{
    public PostgresFactAttribute()
    {
        if (PostgresServer.WhyNot() is { } reason)
        {
            Skip = $"{reason} (.ci/run installs it)";
        }
    }
}
