using System.Globalization;

using StackExchange.Redis;

namespace FanOut.Redis.Adaptive;

/// <summary>What one process asks of the adaptive fleet budget (<see cref="BudgetScripts.Adapt"/>).</summary>
/// <param name="Overload">True for an overload signal (decrease, and maybe pause); false for growth evidence.</param>
/// <param name="Generation">The budget generation the overloaded item started under.</param>
/// <param name="WindowMs">The asking process's latency window in milliseconds: the least time between two changes.</param>
/// <param name="PauseMs">A fleet pause asked for by a retry-after hint, in milliseconds (0: none).</param>
/// <param name="BackoffRatio">The decrease factor.</param>
/// <param name="SeenBudget">
/// For a decrease, the fleet budget as the asking process knew it when the overload came back (0: unknown): the decrease is
/// cut from it when the budget has grown since (another process's growth crossed the overload), as the core law cuts from
/// the level a round ran at, not from the limit its answers have grown meanwhile.
/// </param>
internal readonly record struct BudgetRequest(bool Overload, long Generation, long WindowMs, long PauseMs, double BackoffRatio, int SeenBudget = 0)
{
    /// <summary>The script's arguments.</summary>
    public RedisValue[] ToArguments(RedisValue budget, RedisValue channel) =>
    [
        budget,
        channel,
        Overload ? "o" : "g",
        BackoffRatio.ToString("R", CultureInfo.InvariantCulture),
        WindowMs,
        Generation,
        PauseMs,
        SeenBudget,
    ];
}

/// <summary>The answer of <see cref="BudgetScripts.Adapt"/>.</summary>
/// <param name="Budget">The fleet budget afterwards.</param>
/// <param name="Generation">Its generation (decreases so far).</param>
/// <param name="PausedMs">How long the fleet stays paused, by the server's clock (0: not paused).</param>
/// <param name="Changed">True when this request changed the budget or the pause.</param>
internal readonly record struct BudgetReply(int Budget, long Generation, long PausedMs, bool Changed);
