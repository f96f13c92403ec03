using FanOut.Lab.ServerOverload;
using FanOut.Redis.FleetWorker;

namespace FanOut.Samples.Tests;

/// <summary>A fact that needs PostgreSQL (started as postgres in a temp folder): skipped, saying why, only where it cannot start.</summary>
public sealed class PostgresFactAttribute : FactAttribute
{
    public PostgresFactAttribute()
    {
        if (PostgresServer.WhyNot() is { } reason)
        {
            Skip = reason;
        }
    }
}

/// <summary>A fact that needs redis-server on the PATH: skipped, saying how to get it, only where it is missing (.ci/run installs it).</summary>
public sealed class RedisFactAttribute : FactAttribute
{
    public RedisFactAttribute()
    {
        if (!LocalRedisServer.IsInstalled)
        {
            Skip = "redis-server is not installed: .ci/run installs it (apt-get install -y redis-server)";
        }
    }
}
