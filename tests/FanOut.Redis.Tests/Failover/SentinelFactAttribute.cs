using FanOut.Redis.FleetWorker;

namespace FanOut.Redis.Tests.Failover;

/// <summary>A test that needs redis-server and redis-sentinel: skipped, with the line that installs them, where they are missing.</summary>
public sealed class SentinelFactAttribute : FactAttribute
{
    public SentinelFactAttribute()
    {
        if (!LocalSentinelGroup.IsInstalled)
        {
            Skip = $"redis-sentinel is not installed: .ci/run installs it ({LocalSentinelGroup.InstallLine})";
        }
    }
}
