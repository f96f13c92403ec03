using System.Globalization;

namespace FanOut.Redis.FleetWorker.Soak;

/// <summary>
/// The soak's judge of a killed worker's leases, by the server's clock: each must be due to expire within one lease time of
/// the kill, later only by what the lease scripts' stall rule adds (<c>Prelude</c> in <c>LeaseScripts</c>).
/// </summary>
/// <remarks>
/// <para>The stall rule: a lease script that runs more than half a lease time after the last one (the <c>clock</c> key)
/// pushes every lease live at that last script back by the gap less a third of a lease time, a dead worker's too. It fires
/// whenever no script ran for that long, a stalled Redis or a fleet whose only renewer was just killed (the others then only
/// poll, and a loaded machine stretches a poll past half a lease time).</para>
/// <para>Each observation reads the server's time, the <c>clock</c> key and the lease set at once. A rise of a killed
/// worker's lease between two observations counts as the stall rule's shift only when the clock moved more than half a
/// lease time between them, and only up to that much less a third of a lease time (a stall that began after the first
/// read and ended before the second never shifts more). Without the shifts, each lease must be due within one lease time
/// of the kill, and none may still be live three lease times after it.</para>
/// </remarks>
public sealed class KilledWorkerLeases
{
    /// <summary>A renewal sent just before the kill may run a few milliseconds after the kill's time was read.</summary>
    public const long MarginMs = 100;

    private const string Read = "local t = redis.call('TIME') return {t[1], t[2], redis.call('GET', KEYS[1]) or '', redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')}";

    private readonly int _pid;
    private readonly string _prefix;
    private readonly string _clockKey;
    private readonly string _leasesKey;
    private readonly long _leaseMs;
    private Dictionary<string, (long Score, long Shifted)> _leases = [];
    private long? _clock;
    private long _now;

    private KilledWorkerLeases(int pid, string key, TimeSpan leaseTime)
    {
        _pid = pid;
        _prefix = string.Create(CultureInfo.InvariantCulture, $"{pid}-");
        _clockKey = $"fanout:{{{key}}}:clock";
        _leasesKey = $"fanout:{{{key}}}:leases";
        _leaseMs = (long)leaseTime.TotalMilliseconds;
    }

    /// <summary>The kill's time: the server's clock at the first observation.</summary>
    public long KilledAt { get; private set; }

    /// <summary>The most leases of the worker seen at once.</summary>
    public int Held { get; private set; }

    /// <summary>The latest any of its leases was due to expire, after the kill, in milliseconds, not counting the stall rule's shifts.</summary>
    public long BackMs { get; private set; }

    /// <summary>The most the stall rule pushed one of its leases back, in milliseconds.</summary>
    public long ShiftedMs { get; private set; }

    /// <summary>The first violation seen (a lease due too late, pushed back beyond a stall's shift, or never expiring); null when none.</summary>
    public string? Finding { get; private set; }

    /// <summary>Whether to read again: until no lease is due any more (one lease time after the kill at least), a violation was seen, or three lease times passed.</summary>
    public bool Watching => Finding is null && _now <= Math.Max(KilledAt + _leaseMs, LatestScore) + MarginMs && _now <= Cap;

    private long Cap => KilledAt + (3 * _leaseMs);

    private long LatestScore => _leases.Count == 0 ? 0 : _leases.Values.Max(l => l.Score);

    /// <summary>Starts judging worker <paramref name="pid"/>'s leases on <paramref name="key"/>'s budget: call once its connections are gone.</summary>
    public static async Task<KilledWorkerLeases> StartAsync(int port, int pid, string key, TimeSpan leaseTime)
    {
        var leases = new KilledWorkerLeases(pid, key, leaseTime);
        var reading = await leases.ReadAsync(port).ConfigureAwait(false);
        leases.KilledAt = reading.Now;
        leases.Judge(reading);
        return leases;
    }

    /// <summary>Reads the server's time, the clock key and the worker's leases at once, and judges what changed since the last read.</summary>
    public async Task ObserveAsync(int port) => Judge(await ReadAsync(port).ConfigureAwait(false));

    private async Task<(long Now, long? Clock, List<(string Id, long Score)> Mine)> ReadAsync(int port)
    {
        var reply = await RedisAdmin.SendAsync(port, "EVAL", Read, "2", _clockKey, _leasesKey).ConfigureAwait(false);
        var now = (long.Parse(reply[0], CultureInfo.InvariantCulture) * 1000) + (long.Parse(reply[1], CultureInfo.InvariantCulture) / 1000);
        long? clock = reply[2].Length == 0 ? null : long.Parse(reply[2], CultureInfo.InvariantCulture);
        var mine = new List<(string, long)>();
        for (var i = 3; i + 1 < reply.Count; i += 2)
        {
            if (reply[i].StartsWith(_prefix, StringComparison.Ordinal))
            {
                mine.Add((reply[i], (long)double.Parse(reply[i + 1], CultureInfo.InvariantCulture)));
            }
        }

        return (now, clock, mine);
    }

    private void Judge((long Now, long? Clock, List<(string Id, long Score)> Mine) reading)
    {
        // The most a stall between the two reads may have pushed a live lease back: nothing without a gap above half a lease.
        var gap = reading.Clock - _clock ?? 0;
        var allowed = gap > _leaseMs / 2.0 ? gap - (_leaseMs / 3) : 0;
        var leases = new Dictionary<string, (long Score, long Shifted)>();
        foreach (var (id, score) in reading.Mine)
        {
            var shifted = 0L;
            if (_leases.TryGetValue(id, out var last))
            {
                // Beyond a stall's shift only a renewal sent before the kill may move it, and not past one lease time from the kill.
                var rise = score - last.Score;
                if (rise > allowed && score > KilledAt + _leaseMs + MarginMs)
                {
                    Finding ??= $"worker {_pid}'s lease pushed back {rise} ms {(allowed > 0 ? $"by a stall that allows {allowed} ms" : $"with no stall (the clock moved {gap} ms)")}";
                }

                shifted = last.Shifted + Math.Clamp(rise, 0, allowed);
            }

            leases[id] = (score, shifted);
            ShiftedMs = Math.Max(ShiftedMs, shifted);
            BackMs = Math.Max(BackMs, score - shifted - KilledAt);
        }

        // A purged lease is gone for good: the worker is dead and renews nothing.
        _leases = leases;
        _clock = reading.Clock;
        _now = reading.Now;
        Held = Math.Max(Held, leases.Count);
        if (BackMs > _leaseMs + MarginMs)
        {
            Finding ??= $"worker {_pid}'s leases expire {BackMs} ms after the kill, above the lease time";
        }

        if (_now > Cap && LatestScore > _now)
        {
            Finding ??= $"worker {_pid}'s leases still live {_now - KilledAt} ms after the kill";
        }
    }
}
