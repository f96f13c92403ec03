using System.Globalization;

using StackExchange.Redis;

namespace FanOut.Redis.Adaptive;

/// <summary>What one process tells the adaptive fleet budget (<see cref="BudgetScripts.Claim"/>).</summary>
/// <param name="Claim">
/// This process's claim: the leases its own law allows it (<see cref="Join"/> when it has none yet: the script gives it the
/// fleet's initial budget less what the others claim; <see cref="Withdraw"/> when it leaves).
/// </param>
/// <param name="PauseMs">A fleet pause asked for by a retry-after hint, in milliseconds (0: none).</param>
/// <param name="OverloadGeneration">
/// The budget generation this process knew when its law cut on a "no" (-1: none): the fleet backs off as one, once per
/// generation (<see cref="BudgetScripts.Claim"/>).
/// </param>
/// <param name="WindowMs">This process's latency window in milliseconds: the least time between two fleet-wide back-offs.</param>
internal readonly record struct BudgetRequest(int Claim, long PauseMs, long OverloadGeneration = -1, long WindowMs = 0)
{
    /// <summary>The claim of a process that has none yet.</summary>
    public const int Join = 0;

    /// <summary>The claim of a process that leaves the fleet.</summary>
    public const int Withdraw = -1;

    /// <summary>The script's arguments.</summary>
    public RedisValue[] ToArguments(RedisValue budget, RedisValue channel, string clientId, RedisValue leaseMs) =>
    [
        budget,
        channel,
        clientId,
        Claim.ToString(CultureInfo.InvariantCulture),
        PauseMs,
        leaseMs,
        OverloadGeneration,
        WindowMs,
    ];
}

/// <summary>The answer of <see cref="BudgetScripts.Claim"/>.</summary>
/// <param name="Budget">The fleet budget afterwards: the claims' sum held to the asking process's bounds.</param>
/// <param name="Generation">Its generation (decreases so far).</param>
/// <param name="PausedMs">How long the fleet stays paused, by the server's clock (0: not paused).</param>
/// <param name="Changed">True when this request changed the budget or the pause.</param>
/// <param name="Claim">The asking process's claim as stored (for a join, the initial claim it was given; 0 after a withdrawal).</param>
internal readonly record struct BudgetReply(int Budget, long Generation, long PausedMs, bool Changed, int Claim);
