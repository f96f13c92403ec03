namespace FanOut.Redis.Rates;

/// <summary>The Lua script of the fleet-wide rate limit: GCRA, atomic in Redis, timed by the server's clock (<c>TIME</c>).</summary>
/// <remarks>
/// The state is one number per key (<c>fanout:{Key}:rate</c>): the theoretical arrival time (TAT) in server microseconds,
/// when the bucket would be full again. A request for n permits moves it n emission intervals on; it is allowed when the new
/// TAT is at most the burst ahead of now. No client's clock ever decides anything: a client's clock that runs fast or slow
/// cannot let a burst become two (spring-cloud-gateway PR #1688 scored by the client's clock).
/// </remarks>
internal static class RateScripts
{
    /// <summary>
    /// Acquire: KEYS 1 the TAT, 2 the processes using the rate (client id -> server ms until which it counts); ARGV 1
    /// emission interval in microseconds (window / permit limit), 2 burst in microseconds (burst x interval), 3 permits
    /// wanted, 4 the reservation horizon in microseconds, 5 the client id, 6 how long a client counts after its last
    /// acquisition (ms). Returns {1, 0, p} when granted now; {1, wait, p} when the permits are reserved for server-now + wait
    /// (within the horizon: the caller waits, then goes); {0, wait, p} when even that would be beyond the horizon (the
    /// caller asks again after wait); p is the number of processes using the rate (for the fallback's last share).
    /// </summary>
    /// <remarks>
    /// A reservation books the slot in the same script that checks it, so the waiters of every process queue in time,
    /// each on its own slot, instead of all waking at the same moment to race for one (which lost slots: 193.6/s at a rate
    /// of 200/s over a minute before). A reservation given up on (the caller canceled) is spent.
    /// </remarks>
    public const string Acquire = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
        local interval, burst, n, horizon = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
        local ms, presence = math.floor(now / 1000), tonumber(ARGV[6])
        redis.call('ZADD', KEYS[2], ms + presence, ARGV[5])
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms)
        redis.call('PEXPIRE', KEYS[2], presence)
        local p = redis.call('ZCARD', KEYS[2])
        local tat = tonumber(redis.call('GET', KEYS[1]) or now)
        if tat < now then tat = now end
        local new_tat = tat + n * interval
        local allow_at = new_tat - burst
        local wait = allow_at - now
        if wait <= horizon then
          redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
          if wait < 0 then wait = 0 end
          return {1, math.ceil(wait), p}
        end
        return {0, math.ceil(wait - horizon), p}
        """;
}
