namespace FanOut.Redis.Adaptive;

/// <summary>The Lua script that moves an adaptive fleet budget: atomic in Redis, timed by the server's clock (<c>TIME</c>).</summary>
/// <remarks>
/// <para>Each process runs the core's adaptive law over its own answers (<see cref="FleetClaim"/>) and claims what it
/// decides; the fleet budget is the sum of the live claims. The law's decisions are proportional, so they compose: a burst
/// that cuts every process that saw it by a factor cuts the sum by that factor, and each process's product (its rate times
/// the latency without a queue) sums to the fleet's.</para>
/// <para>Keys: 1 the budget hash (<c>fanout:{Key}:budget</c>: <c>b</c> the budget, <c>g</c> its generation (decreases so
/// far), <c>p</c> the server time a fleet pause ends, <c>d</c> the server time of the last fleet-wide back-off), 2 the claimants (client id -> server ms its claim expires), 3 the
/// claims (client id -> leases). The lease scripts read <c>b</c>, <c>g</c> and <c>p</c> (<see cref="Leases.LeaseScripts"/>:
/// no lease is granted above the budget or while paused) and create the hash at the initial budget when Redis has none.</para>
/// </remarks>
internal static class BudgetScripts
{
    /// <summary>
    /// Claim: ARGV 1 <c>a MIN MAX INITIAL MAXPAUSE</c>, 2 channel, 3 client id, 4 the claim (0: join, -1: withdraw), 5 a pause
    /// in ms (0: none), 6 the lease time in ms, 7 the generation the asking process knew when its law cut on a "no" (-1:
    /// none), 8 its latency window in ms. Returns {budget, generation, pause ms left, 1 if anything changed, the claim as
    /// stored}.
    /// </summary>
    /// <remarks>
    /// <para>Claims of clients that stopped claiming for a lease time are dropped first: a crashed process's claim goes with
    /// its leases. A join is given the initial budget less what the others claim (at least one): the fleet's first contact is
    /// bounded by the initial budget, not by it times the processes. A claim is held to MAX; the budget is the claims' sum held
    /// to this process's MIN..MAX (an earlier fleet, or a process with other options, may have left one outside them). A
    /// change publishes <c>b:BUDGET:GENERATION</c>.</para>
    /// <para>A "no" one process's law cut on is the fleet's: it bumps the generation, and every other process that learns of
    /// the new generation backs its own law off as if it had seen the "no" (<see cref="FleetClaim"/>), so the fleet backs off
    /// as one and a process that holds a tiny cap does not leave the others' calls refused. Once per generation (processes
    /// that saw the same burst sent the same one) and at most once per window of the asking process.</para>
    /// <para>A pause moves the pause end to server-now + the pause (at most MAXPAUSE), if later, and publishes <c>p:MS</c>.</para>
    /// </remarks>
    public const string Claim = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local min_s, max_s, initial_s, max_pause_s = string.match(ARGV[1], '^a (%d+) (%d+) (%d+) (%d+)$')
        local min_b, max_b, max_pause = tonumber(min_s), tonumber(max_s), tonumber(max_pause_s)
        local client = ARGV[3]
        local claim = tonumber(ARGV[4])
        local pause = tonumber(ARGV[5])
        local lease = tonumber(ARGV[6])
        local overload = tonumber(ARGV[7] or -1) or -1
        local window = tonumber(ARGV[8] or 0) or 0
        local state = redis.call('HMGET', KEYS[1], 'b', 'g', 'p', 'd')
        if not state[1] then
          redis.call('HSET', KEYS[1], 'b', initial_s, 'g', 0)
          state = {initial_s, 0, 0}
        end
        local stored = tonumber(state[1])
        local generation = tonumber(state[2] or 0)
        local until_ms = math.min(tonumber(state[3] or 0), now + max_pause)
        local backed_off_at = tonumber(state[4] or 0)
        local changed = 0
        if overload >= 0 and overload == generation and now - backed_off_at >= window then
          generation = generation + 1
          redis.call('HSET', KEYS[1], 'g', generation, 'd', now)
          changed = 1
        end
        if pause > 0 and now + math.min(pause, max_pause) > until_ms then
          pause = math.min(pause, max_pause)
          until_ms = now + pause
          redis.call('HSET', KEYS[1], 'p', until_ms)
          redis.call('PUBLISH', ARGV[2], 'p:' .. pause)
          changed = 1
        end
        local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
        for i = 1, #expired do redis.call('HDEL', KEYS[3], expired[i]) end
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
        local others = 0
        local claims = redis.call('HGETALL', KEYS[3])
        for i = 1, #claims, 2 do
          if claims[i] ~= client then others = others + tonumber(claims[i + 1]) end
        end
        if claim < 0 then
          redis.call('HDEL', KEYS[3], client)
          redis.call('ZREM', KEYS[2], client)
          claim = 0
        else
          if claim == 0 then claim = math.max(1, tonumber(initial_s) - others) end
          claim = math.min(claim, max_b)
          redis.call('HSET', KEYS[3], client, claim)
          redis.call('ZADD', KEYS[2], now + lease, client)
        end
        local budget = math.min(max_b, math.max(min_b, others + claim))
        if budget ~= stored or changed == 1 then
          if budget ~= stored then
            redis.call('HSET', KEYS[1], 'b', budget)
            changed = 1
          end
          redis.call('PUBLISH', ARGV[2], 'b:' .. budget .. ':' .. generation)
        end
        local paused = 0
        if until_ms > now then paused = until_ms - now end
        return {budget, generation, paused, changed, claim}
        """;
}
