namespace FanOut.Redis.Adaptive;

/// <summary>The Lua script that moves an adaptive fleet budget: atomic in Redis, timed by the server's clock (<c>TIME</c>).</summary>
/// <remarks>
/// <para>The budget hash (key 2, <c>fanout:{Key}:budget</c>) holds: <c>b</c> the budget, <c>g</c> its generation (decreases so
/// far), <c>d</c> and <c>u</c> the server time of the last decrease and of the last growth, <c>s</c> 1 while in slow start (no
/// decrease yet), <c>p</c> the server time a fleet pause ends, <c>l</c> and <c>k</c> the level that was last rejected and the
/// spacing of probes back to it, in windows. The lease scripts read <c>b</c>, <c>g</c> and <c>p</c>
/// (<see cref="Leases.LeaseScripts"/>: no lease is granted while paused) and create the hash when Redis has none.</para>
/// <para>Only counts are read from the lease set (live leases, by score): this script never purges, so the stall rule of the
/// lease scripts (leases pushed back after Redis stood still) always runs before any lease is dropped.</para>
/// </remarks>
internal static class BudgetScripts
{
    /// <summary>
    /// Adapt: KEYS 1 leases, 2 budget hash; ARGV 1 <c>a MIN MAX INITIAL MAXPAUSE</c>, 2 channel, 3 kind (<c>o</c> overload, <c>g</c>
    /// growth evidence), 4 backoff ratio, 5 the asking client's latency window in ms, 6 the generation the overloaded item
    /// started under, 7 a pause in ms (0: none), 8 the budget the asking process knew when the overload came back (0:
    /// unknown). Returns {budget, generation, pause ms left, 1 if anything changed}.
    /// </summary>
    /// <remarks>
    /// <para>The stored budget is read held to this process's MIN..MAX, and a stored pause to its MAXPAUSE ms: an earlier
    /// fleet, or a process with other options, may have left a budget or a pause outside them.</para>
    /// <para>An overload decreases the budget once per generation: a second signal about the same generation (another item
    /// or another process that saw the same burst) finds the generation moved on and changes nothing. A decrease also waits
    /// for one window after the last, whatever the generation. In slow start the first decrease goes to two thirds of the
    /// budget, the budget before slow start's last growth by half: the last the fleet used without overload (the larger of
    /// that and the ratio times the leases in use left a budget up to 40% above a hard cap that the last step had crossed,
    /// and one more burst of rejections); after it, to the ratio times the budget. Both are taken of the budget the asking
    /// process knew when the overload came back, when that is lower than the budget now: a growth another process asked
    /// meanwhile (the requests crossed) is not cut from, as the core law cuts from the level a round ran at. A decrease is
    /// at least one permit and never goes below MIN. It publishes <c>b:BUDGET:GENERATION</c>.</para>
    /// <para>A pause moves the pause end to server-now + the pause, if later, and publishes <c>p:MS</c>; except on the "no" that
    /// decreases a budget that had grown back to the rejected level (a probe's): the probe asked for that "no", and a cap whose
    /// every 429 carries a Retry-After would pause the whole fleet at every probe (the core limit's rule 6, docs/adaptive.md).
    /// A second "no" of the same burst pauses.</para>
    /// <para>Growth evidence grows the budget (by half in slow start, else by one) when the fleet is not paused, one window
    /// has passed since the last decrease and the last growth, and the live leases are at least 7/8 of the budget (the fleet
    /// uses what it has). It publishes <c>b:BUDGET:GENERATION</c>.</para>
    /// <para>Spaced probing, the core law's rule (docs/adaptive.md): a decrease remembers the budget that was rejected
    /// (<c>l</c>) and a spacing in windows (<c>k</c>, 2; doubled, up to 8, when the rejected budget had reached the level
    /// remembered before: a rejected probe). Growth back up to that level (the probe) waits <c>k</c> windows after the last
    /// decrease instead of one, so a hard cap costs a rejection every few windows, not every window. A growth asked at or
    /// above the level, a window after the last growth without a decrease, means the probe passed: the level is forgotten.</para>
    /// </remarks>
    public const string Adapt = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local min_s, max_s, initial_s, max_pause_s = string.match(ARGV[1], '^a (%d+) (%d+) (%d+) (%d+)$')
        local min_b, max_b, max_pause = tonumber(min_s), tonumber(max_s), tonumber(max_pause_s)
        local kind = ARGV[3]
        local ratio = tonumber(ARGV[4])
        local seen = tonumber(ARGV[8] or 0) or 0
        local window = tonumber(ARGV[5])
        local state = redis.call('HMGET', KEYS[2], 'b', 'g', 'p', 'd', 'u', 's', 'l', 'k')
        if not state[1] then
          redis.call('HSET', KEYS[2], 'b', initial_s, 'g', 0, 's', 1)
          state = {initial_s, 0, 0, 0, 0, '1'}
        end
        local budget = math.min(max_b, math.max(min_b, tonumber(state[1])))
        local generation = tonumber(state[2] or 0)
        local until_ms = math.min(tonumber(state[3] or 0), now + max_pause)
        local decreased_at = tonumber(state[4] or 0)
        local grown_at = tonumber(state[5] or 0)
        local slow = state[6] ~= '0'
        local level = tonumber(state[7] or 0) or 0
        local spacing = tonumber(state[8] or 2) or 2
        local in_use = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
        local changed = 0
        if kind == 'o' then
          local pause = tonumber(ARGV[7])
          local decreases = tonumber(ARGV[6]) == generation and now - decreased_at >= window
          local from = budget
          if seen > 0 and seen < from then from = seen end
          local probe = level > 0 and from >= level
          if pause > 0 and now + pause > until_ms and not (decreases and probe) then
            until_ms = now + pause
            redis.call('HSET', KEYS[2], 'p', until_ms)
            redis.call('PUBLISH', ARGV[2], 'p:' .. pause)
            changed = 1
          end
          if decreases then
            if probe then spacing = math.min(8, spacing * 2) else spacing = 2 end
            level = from
            local target = math.floor(from * ratio)
            if slow then target = math.floor(from * 2 / 3) end
            if target > budget - 1 then target = budget - 1 end
            if target < min_b then target = min_b end
            budget = target
            generation = generation + 1
            redis.call('HSET', KEYS[2], 'b', budget, 'g', generation, 'd', now, 's', 0, 'l', level, 'k', spacing)
            redis.call('PUBLISH', ARGV[2], 'b:' .. budget .. ':' .. generation)
            changed = 1
          end
        elseif kind == 'g' then
          local hold = 0
          if level > 0 and budget < level and budget + 1 >= level then hold = window * (spacing - 1) end
          if until_ms <= now and now - decreased_at >= window + hold and now - grown_at >= window and budget < max_b and in_use * 8 >= budget * 7 then
            if level > 0 and budget >= level then
              level = 0
              spacing = 2
            end
            if slow then budget = math.min(max_b, math.max(budget + 1, math.floor(budget * 3 / 2))) else budget = budget + 1 end
            redis.call('HSET', KEYS[2], 'b', budget, 'u', now, 'l', level, 'k', spacing)
            redis.call('PUBLISH', ARGV[2], 'b:' .. budget .. ':' .. generation)
            changed = 1
          end
        end
        local paused = 0
        if until_ms > now then paused = until_ms - now end
        return {budget, generation, paused, changed}
        """;
}
