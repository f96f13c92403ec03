namespace FanOut.Redis.Diagnostics;

/// <summary>One limit's measurements on <see cref="RedisLimitMetrics"/>, each with the limit's tags; nothing is recorded while no one listens.</summary>
internal sealed class RedisLimitTelemetry(string key)
{
    private const string RedisKind = "redis";

    private readonly KeyValuePair<string, object?>[] _tags = [new(FanOut.Diagnostics.FanOutInstruments.LimitKindTag, RedisKind), new(RedisLimitInstruments.KeyTag, key)];

    public void LeasesHeld(int delta)
    {
        if (delta != 0 && RedisLimitMetrics.LeasesHeld.Enabled)
        {
            RedisLimitMetrics.LeasesHeld.Add(delta, _tags);
        }
    }

    public void FleetInUse(int leases)
    {
        if (RedisLimitMetrics.FleetInUse.Enabled)
        {
            RedisLimitMetrics.FleetInUse.Record(leases, _tags);
        }
    }

    public void Waited(TimeSpan wait)
    {
        if (RedisLimitMetrics.WaitDuration.Enabled)
        {
            RedisLimitMetrics.WaitDuration.Record(wait.TotalSeconds, _tags);
        }
    }

    public void Renewed(int leases)
    {
        if (leases > 0 && RedisLimitMetrics.Renewals.Enabled)
        {
            RedisLimitMetrics.Renewals.Add(leases, _tags);
        }
    }

    public void Expired(int leases)
    {
        if (leases > 0 && RedisLimitMetrics.Expiries.Enabled)
        {
            RedisLimitMetrics.Expiries.Add(leases, _tags);
        }
    }

    public void Lost(int leases)
    {
        if (leases > 0 && RedisLimitMetrics.Lost.Enabled)
        {
            RedisLimitMetrics.Lost.Add(leases, _tags);
        }
    }

    public void Unavailable() => RedisLimitMetrics.Unavailable.Add(1, _tags);
}
