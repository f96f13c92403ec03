namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>
/// A user's limit of <paramref name="current"/> permits that learns from samples, whose start hook throws when the
/// schedule says so, in flows marked with <see cref="ThrowHere"/> (so only the code the scenario points at sees it throw).
/// </summary>
public sealed class HookThrowingLimit(Schedule schedule, int current, int throwPercent) : ConcurrencyLimit(LimitTraits.LearnsFromWork)
{
    private static readonly AsyncLocal<bool> s_throwHere = new();

    /// <summary>True in an async flow whose calls to the start hook may throw.</summary>
    public static bool ThrowHere
    {
        get => s_throwHere.Value;
        set => s_throwHere.Value = value;
    }

    public override int Current => current;

    public override string Kind => "user";

    protected override long OnItemStarting()
    {
        if (ThrowHere && schedule.Chance(throwPercent))
        {
            throw new InvalidOperationException("The limit's start hook failed.");
        }

        return base.OnItemStarting();
    }
}
