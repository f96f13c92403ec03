using System.Globalization;

using StackExchange.Redis;

namespace FanOut.Redis.Leases;

/// <summary>One client's view of the lease store of one budget: runs the <see cref="LeaseScripts"/> with the right keys and arguments.</summary>
/// <remarks>StackExchange.Redis sends each script by SHA and re-sends its text when Redis does not know it (after a restart).</remarks>
internal sealed class LeaseStore
{
    private const int FixedArguments = 5;

    private readonly IDatabase _database;
    private readonly RedisKey[] _keys;
    private readonly RedisKey[] _releaseKeys;
    private readonly RedisKey[] _leaveKeys;
    private readonly RedisKey[] _budgetKeys;
    private readonly RedisValue _budget;
    private readonly RedisValue _leaseMs;
    private readonly RedisValue _channelName;
    private readonly int _replicas;
    private readonly long _replicaTimeoutMs;
    private long _roundTrips;

    /// <summary>See <see cref="ScriptsSent"/>.</summary>
    private static long s_scriptsSent;

    /// <summary>A store for <paramref name="options"/>'s budget, used by the client <paramref name="clientId"/>.</summary>
    public LeaseStore(IDatabase database, RedisLimitOptions options, string clientId)
    {
        _database = database;
        ClientId = clientId;
        var prefix = $"fanout:{{{options.Key}}}:";
        LeasesKey = prefix + "leases";
        BudgetKey = prefix + "budget";
        _keys = [LeasesKey, prefix + "clients", prefix + "waiting", prefix + "epoch", prefix + "grace", prefix + "clock", BudgetKey, prefix + "starving"];
        _budgetKeys = [LeasesKey, BudgetKey];
        _releaseKeys = [LeasesKey, prefix + "starving"];
        _leaveKeys = [prefix + "clients", prefix + "waiting", prefix + "starving"];
        _budget = options.Adaptive is { } adaptive
            ? (RedisValue)string.Create(CultureInfo.InvariantCulture, $"a {adaptive.MinBudget} {adaptive.MaxBudget} {adaptive.InitialBudget} {(long)adaptive.MaxPause.TotalMilliseconds}")
            : (RedisValue)options.Budget;
        _leaseMs = (long)options.LeaseTime.TotalMilliseconds;
        _channelName = prefix + "released";
        Channel = ChannelOf(options.Key);
        _replicas = options.ReplicaAcknowledgements;
        _replicaTimeoutMs = Math.Max(1, (long)options.ReplicaTimeout.TotalMilliseconds);
    }

    /// <summary>The channel of <paramref name="key"/>'s budget: releases (<c>r</c>) and short acquisitions (<c>w:client</c>).</summary>
    public static RedisChannel ChannelOf(string key) => RedisChannel.Literal($"fanout:{{{key}}}:released");

    /// <summary>This client's id: a prefix of each of its lease ids.</summary>
    public string ClientId { get; }

    /// <summary>Scripts this client has run: its round trips to Redis.</summary>
    public long RoundTrips => Interlocked.Read(ref _roundTrips);

    /// <summary>Lease and budget scripts sent by every limit of this process: a flush that finds none since the last is not needed (<see cref="ReleaseSubscription.FlushAsync"/>).</summary>
    public static long ScriptsSent => Interlocked.Read(ref s_scriptsSent);

    /// <summary>The sorted set of leases (id -> expiry in server milliseconds).</summary>
    public RedisKey LeasesKey { get; }

    /// <summary>The adaptive budget's hash (see <see cref="Adaptive.BudgetScripts"/>).</summary>
    public RedisKey BudgetKey { get; }

    /// <summary>Where releases (<c>r</c>) and short acquisitions (<c>w:client</c>) are published.</summary>
    public RedisChannel Channel { get; }

    /// <summary>Asks for <paramref name="ids"/>.Count leases, named by <paramref name="ids"/>, for a client holding <paramref name="held"/>.</summary>
    public async Task<AcquireReply> AcquireAsync(string epoch, IReadOnlyList<string> ids, int held = 0)
    {
        var arguments = Arguments(epoch, 2 + ids.Count);
        arguments[FixedArguments] = held;
        arguments[FixedArguments + 1] = ids.Count;
        for (var i = 0; i < ids.Count; i++)
        {
            arguments[FixedArguments + 2 + i] = ids[i];
        }

        var reply = (RedisResult[])(await Evaluate(LeaseScripts.Acquire, _keys, arguments).ConfigureAwait(false))!;
        if ((int)reply[0] > 0)
        {
            await ReplicatedAsync("acquire").ConfigureAwait(false);
        }

        return new AcquireReply((int)reply[0], (string)reply[1]!, new FleetView((int)reply[2], (int)reply[3], (int)reply[4], (int)reply[5], (int)reply[6], (long)reply[7], (long)reply[8], (int)reply[9]));
    }

    /// <summary>Renews <paramref name="ids"/>, re-adding missing ones while the budget has room.</summary>
    public async Task<RenewReply> RenewAsync(string epoch, IReadOnlyList<string> ids)
    {
        var arguments = Arguments(epoch, ids.Count);
        for (var i = 0; i < ids.Count; i++)
        {
            arguments[FixedArguments + i] = ids[i];
        }

        var reply = (RedisResult[])(await Evaluate(LeaseScripts.Renew, _keys, arguments).ConfigureAwait(false))!;
        if (ids.Count > 0)
        {
            await ReplicatedAsync("renew").ConfigureAwait(false);
        }

        const int LostFrom = 11;
        var lost = new string[reply.Length - LostFrom];
        for (var i = 0; i < lost.Length; i++)
        {
            lost[i] = (string)reply[LostFrom + i]!;
        }

        return new RenewReply((string)reply[0]!, (int)reply[1], (int)reply[2], lost, new FleetView((int)reply[3], (int)reply[4], (int)reply[5], (int)reply[6], (int)reply[7], (long)reply[8], (long)reply[9], (int)reply[10]));
    }

    /// <summary>Gives <paramref name="ids"/> back; returns the leases in use fleet-wide afterwards and the clients starving.</summary>
    public async Task<(int InUse, int Starving)> ReleaseAsync(IReadOnlyList<string> ids)
    {
        var arguments = new RedisValue[1 + ids.Count];
        arguments[0] = _channelName;
        for (var i = 0; i < ids.Count; i++)
        {
            arguments[1 + i] = ids[i];
        }

        var reply = (RedisResult[])(await Evaluate(LeaseScripts.Release, _releaseKeys, arguments).ConfigureAwait(false))!;
        return ((int)reply[1], (int)reply[2]);
    }

    /// <summary>Runs the adaptive budget's <paramref name="request"/> (<see cref="Adaptive.BudgetScripts.Adapt"/>).</summary>
    public async Task<Adaptive.BudgetReply> AdaptAsync(Adaptive.BudgetRequest request)
    {
        var reply = (RedisResult[])(await Evaluate(Adaptive.BudgetScripts.Adapt, _budgetKeys, request.ToArguments(_budget, _channelName)).ConfigureAwait(false))!;
        return new Adaptive.BudgetReply((int)reply[0], (long)reply[1], (long)reply[2], (int)reply[3] != 0);
    }

    /// <summary>Removes this client from the active and waiting sets.</summary>
    public Task LeaveAsync() => Evaluate(LeaseScripts.Leave, _leaveKeys, [ClientId]);

    /// <summary>Leases held fleet-wide right now, live or not yet purged (for tests and diagnostics).</summary>
    public Task<long> CountAsync() => _database.SortedSetLengthAsync(LeasesKey);

    private Task<RedisResult> Evaluate(string script, RedisKey[] keys, RedisValue[] arguments)
    {
        Interlocked.Increment(ref _roundTrips);
        Interlocked.Increment(ref s_scriptsSent);
        return _database.ScriptEvaluateAsync(script, keys, arguments);
    }

    /// <summary>
    /// With <see cref="RedisLimitOptions.ReplicaAcknowledgements"/>, waits (<c>WAIT</c>) until that many replicas hold the
    /// writes this connection sent so far, the script just run included (Redis runs one connection's commands in order).
    /// </summary>
    /// <exception cref="TimeoutException">Fewer replicas acknowledged within the timeout: the script's leases are not to be used.</exception>
    private async Task ReplicatedAsync(string script)
    {
        if (_replicas == 0)
        {
            return;
        }

        Interlocked.Increment(ref _roundTrips);
        var acknowledged = (long)await _database.ExecuteAsync("WAIT", _replicas, _replicaTimeoutMs).ConfigureAwait(false);
        if (acknowledged < _replicas)
        {
            throw new TimeoutException(string.Create(CultureInfo.InvariantCulture, $"The lease {script} script was acknowledged by {acknowledged} of the {_replicas} replicas required within {_replicaTimeoutMs} ms (WAIT); its leases are not used."));
        }
    }

    private RedisValue[] Arguments(string epoch, int extra)
    {
        var arguments = new RedisValue[FixedArguments + extra];
        arguments[0] = _budget;
        arguments[1] = _leaseMs;
        arguments[2] = ClientId;
        arguments[3] = epoch;
        arguments[4] = _channelName;
        return arguments;
    }
}
