using StackExchange.Redis;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>
/// A key's epoch (<c>fanout:{key}:epoch</c>, as the lease scripts keep it). Set before a key's first client, it makes the
/// key one used before: on a server younger than one lease time that client then waits out no restart grace
/// (docs/redis-limit.md), which a test of something else should not pay.
/// </summary>
/// <remarks>Not for the tests of the grace itself, or of a restart: those must see the key as Redis has it.</remarks>
public static class KeyEpoch
{
    /// <summary>Sets <paramref name="key"/>'s epoch to <paramref name="epoch"/>.</summary>
    public static Task SetAsync(IDatabase database, string key, string epoch = "fresh") => database.StringSetAsync($"fanout:{{{key}}}:epoch", epoch);
}
