namespace FanOut.Redis.Leases;

/// <summary>
/// The Lua scripts of the lease protocol. Each runs atomically in Redis, takes the time from the server (<c>TIME</c>),
/// and first purges expired leases, clients and waiters, so no client's clock ever decides an expiry.
/// </summary>
/// <remarks>
/// Keys: 1 leases (sorted set: lease id -> expiry ms), 2 clients (client id -> expiry ms), 3 waiting (client id -> expiry ms),
/// 4 epoch (string, recreated when Redis lost its data), 5 grace (no lease is granted while it exists: surviving clients
/// re-register theirs meanwhile; see <see cref="Prelude"/>), 6 clock (server ms of the
/// last acquire or renew script), 7 the adaptive budget (a hash, see <see cref="Adaptive.BudgetScripts"/>), 8 starving (client
/// id -> server ms it started starving: waiting clients below the floor share, see <see cref="Acquire"/>).
/// Common arguments: 1 budget (a number; or <c>a MIN MAX INITIAL MAXPAUSE</c> for an adaptive budget, read from key 7 and
/// held to MIN..MAX, its pause to MAXPAUSE ms: what an earlier fleet, or a process with other options, left there), 2 lease ms,
/// 3 client id, 4 the client's epoch (empty when new), 5 the wake-up channel.
/// </remarks>
internal static class LeaseScripts
{
    /// <summary>
    /// Shared opening: server time, stall, purge, epoch, client heartbeat, budget. Defines now, budget, lease, client, expired,
    /// epoch, and for an adaptive budget its generation and the fleet's pause (ms left, 0 when none).
    /// </summary>
    /// <remarks>
    /// The stall: while leases are held, some client renews them every third of the lease time, so a script runs at least
    /// that often. When none ran for more than half a lease time, Redis itself stood still (<c>CLIENT PAUSE</c>, a blocked
    /// server, a partition from every client): the renewals were sent but not run. The leases that were live at the last
    /// script are then pushed back by the stall (less the third a renewal may take anyway) before anything is purged, so
    /// the first script after the stall does not hand a running item's permit to another client ahead of the renewal that
    /// was queued behind it. A crashed client's leases come back within one lease time while other clients run scripts,
    /// and within two thirds of one after the next script otherwise: when it held the whole budget the others only poll, and
    /// a loaded host can space their polls past half a lease time, so its leases are pushed back too.
    /// <para>The grace: whoever creates a new epoch (Redis lost its data), no lease is granted until every lease of the old
    /// epoch has expired or been re-registered by its holder's renewal. A client that saw the old epoch knows there was one:
    /// the grace lasts one lease time. A client new to the key cannot tell a restart from a first start, but no lease of an
    /// earlier life of the server outlives one lease time of its uptime (each was renewed before the server started): the
    /// grace lasts one lease time less the uptime (whole seconds, rounded down, so never too short), and none when the server
    /// has run longer. Where <c>INFO</c> is refused, a full lease time.</para>
    /// </remarks>
    private const string Prelude = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local lease = tonumber(ARGV[2])
        local client = ARGV[3]
        local clock = redis.call('GET', KEYS[6])
        if clock and now - tonumber(clock) > lease / 2 then
          local shift = now - tonumber(clock) - math.floor(lease / 3)
          local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. clock, '+inf', 'WITHSCORES')
          for i = 1, #live, 2 do redis.call('ZADD', KEYS[1], tonumber(live[i + 1]) + shift, live[i]) end
        end
        redis.call('SET', KEYS[6], now)
        local expired = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
        redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
        local epoch = redis.call('GET', KEYS[4])
        if not epoch then
          epoch = t[1] .. '.' .. t[2]
          redis.call('SET', KEYS[4], epoch)
          local grace = lease
          if ARGV[4] == '' then
            local ok, info = pcall(redis.call, 'INFO', 'server')
            local up = ok and type(info) == 'string' and tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
            if up then grace = lease - up * 1000 end
          end
          if grace > 0 then redis.call('SET', KEYS[5], '1', 'PX', grace) end
        end
        redis.call('ZADD', KEYS[2], now + lease, client)
        local budget = tonumber(ARGV[1])
        local generation, paused = 0, 0
        if not budget then
          local min_s, max_s, initial, max_pause = string.match(ARGV[1], '^a (%d+) (%d+) (%d+) (%d+)$')
          local state = redis.call('HMGET', KEYS[7], 'b', 'g', 'p')
          if not state[1] then
            redis.call('HSET', KEYS[7], 'b', initial, 'g', 0, 's', 1)
            state = {initial, 0, 0}
          end
          budget = math.min(tonumber(max_s), math.max(tonumber(min_s), tonumber(state[1])))
          generation = tonumber(state[2] or 0)
          local until_ms = tonumber(state[3] or 0)
          if until_ms > now then paused = math.min(until_ms - now, tonumber(max_pause)) end
        end
        local starving = redis.call('ZRANGE', KEYS[8], 0, -1)
        for i = 1, #starving do
          if not redis.call('ZSCORE', KEYS[3], starving[i]) then redis.call('ZREM', KEYS[8], starving[i]) end
        end
        local function others_waiting()
          local n = redis.call('ZCARD', KEYS[3])
          if redis.call('ZSCORE', KEYS[3], client) then n = n - 1 end
          return n
        end
        local function others_starving()
          local n = redis.call('ZCARD', KEYS[8])
          if redis.call('ZSCORE', KEYS[8], client) then n = n - 1 end
          return n
        end

        """;

    /// <summary>
    /// Acquire: ARGV 6 = leases the client holds, 7 = wanted count, 8.. = that many fresh lease ids. Grants up to the free
    /// budget less one lease for each starving client ahead of this one (none during a grace or a fleet pause), marks the
    /// client waiting when short, except while paused: starving (and publishes <c>s:client</c>) when it then holds less than
    /// the floor share (at least one), else waiting (<c>w:client</c>). Returns {granted or -1 on an epoch change, epoch,
    /// leases in use, expired purged, other clients waiting, clients, budget, budget generation, pause ms left, other clients
    /// starving}.
    /// </summary>
    /// <remarks>
    /// Fair shares: with B the budget and P the active clients, each client's share is floor(B / P) or one more. A client
    /// left short below floor(B / P) (below one when B &lt; P) is starving: it joins a queue (key 8, by the time it started
    /// starving) and the room that frees goes to the starving first, oldest first, whoever asks. The clients above the floor
    /// share hand a lease back as each of their items ends while anyone starves (<see cref="RedisConcurrencyLimit"/>), so a
    /// client left with nothing gets a permit within one item of those above it, and no client holds more than one lease
    /// more than another at rest. When B &lt; P the share is 0 or 1, and the hand-backs rotate the budget through the queue.
    /// </remarks>
    public const string Acquire = Prelude + """
        local held = tonumber(ARGV[6])
        local want = tonumber(ARGV[7])
        local granted = -1
        if epoch == ARGV[4] then
          granted = 0
          if redis.call('EXISTS', KEYS[5]) == 0 and paused == 0 then
            local free = budget - redis.call('ZCARD', KEYS[1])
            local ahead = redis.call('ZRANK', KEYS[8], client) or redis.call('ZCARD', KEYS[8])
            free = free - ahead
            if free > want then free = want end
            for i = 1, free do redis.call('ZADD', KEYS[1], now + lease, ARGV[7 + i]) end
            if free > 0 then granted = free end
          end
          if granted < want and paused == 0 then
            redis.call('ZADD', KEYS[3], now + lease, client)
            local floor_share = math.floor(budget / math.max(1, redis.call('ZCARD', KEYS[2])))
            if held + granted < math.max(1, floor_share) then
              redis.call('ZADD', KEYS[8], 'NX', now, client)
              redis.call('PUBLISH', ARGV[5], 's:' .. client)
            else
              redis.call('ZREM', KEYS[8], client)
              redis.call('PUBLISH', ARGV[5], 'w:' .. client)
            end
          else
            redis.call('ZREM', KEYS[3], client)
            redis.call('ZREM', KEYS[8], client)
          end
        end
        return {granted, epoch, redis.call('ZCARD', KEYS[1]), expired, others_waiting(), redis.call('ZCARD', KEYS[2]), budget, generation, paused, others_starving()}
        """;

    /// <summary>
    /// Renew: ARGV 6.. = the client's lease ids. Extends each live one; re-adds a missing one (expired, or lost with Redis's data)
    /// while the budget has room; the rest are lost. Returns {epoch, renewed, reclaimed, leases in use, expired purged,
    /// other clients waiting, clients, budget, budget generation, pause ms left, other clients starving, lost ids...}.
    /// </summary>
    public const string Renew = Prelude + """
        local renewed, reclaimed = 0, 0
        local lost = {}
        for i = 6, #ARGV do
          local id = ARGV[i]
          if redis.call('ZSCORE', KEYS[1], id) then
            redis.call('ZADD', KEYS[1], now + lease, id)
            renewed = renewed + 1
          elseif redis.call('ZCARD', KEYS[1]) < budget then
            redis.call('ZADD', KEYS[1], now + lease, id)
            reclaimed = reclaimed + 1
          else
            lost[#lost + 1] = id
          end
        end
        local reply = {epoch, renewed, reclaimed, redis.call('ZCARD', KEYS[1]), expired, others_waiting(), redis.call('ZCARD', KEYS[2]), budget, generation, paused, others_starving()}
        for i = 1, #lost do reply[#reply + 1] = lost[i] end
        return reply
        """;

    /// <summary>Release: KEYS 1 leases, 2 starving; ARGV 1 = channel, 2.. = lease ids. Removes them and publishes <c>r</c> if any was live. Returns {removed, leases in use, clients starving}.</summary>
    public const string Release = """
        local removed = 0
        for i = 2, #ARGV do removed = removed + redis.call('ZREM', KEYS[1], ARGV[i]) end
        if removed > 0 then redis.call('PUBLISH', ARGV[1], 'r') end
        return {removed, redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])}
        """;

    /// <summary>Leave: KEYS 1 clients, 2 waiting, 3 starving; ARGV 1 = client id. The client no longer counts for fair shares.</summary>
    public const string Leave = """
        redis.call('ZREM', KEYS[1], ARGV[1])
        redis.call('ZREM', KEYS[2], ARGV[1])
        redis.call('ZREM', KEYS[3], ARGV[1])
        return 0
        """;
}
