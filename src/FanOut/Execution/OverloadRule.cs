namespace FanOut.Execution;

/// <summary>
/// The re-run rule, in one place: how a failed attempt is judged, and whether the item may run again.
/// </summary>
/// <remarks>
/// <para>
/// An item runs again only when the downstream said it did not process it: the limit's overload test says so (by default
/// HTTP 429, HTTP 503 or an <see cref="OverloadedException"/>; the user's <see cref="AdaptiveLimitOptions.IsOverload"/>
/// when given). A client-side timeout (<see cref="TimeoutException"/>, or HttpClient's canceled request whose inner
/// exception is one) backs an adaptive limit off like an overload, but fails the item: the request may have been done.
/// </para>
/// <para>
/// A retry-after hint longer than <see cref="OverloadBackoff.MaxHonouredRetryAfter"/>, however large (even infinite),
/// fails the item with its own exception at once.
/// </para>
/// </remarks>
internal static class OverloadRule
{
    /// <summary>What the limit learns from a failed attempt, and whether the failure may be re-run.</summary>
    /// <param name="limit">The call's limit; its overload test is user code and may throw.</param>
    /// <param name="failure">What the body threw.</param>
    /// <param name="callbackFailure">Set to what the overload test threw (it then reads as "not an overload").</param>
    /// <param name="mayRunAgain">True when the downstream said it did not process the item.</param>
    public static ItemOutcome Judge(ConcurrencyLimit limit, Exception failure, ref Exception? callbackFailure, out bool mayRunAgain)
    {
        try
        {
            mayRunAgain = limit.IsOverload(failure);
        }
        catch (Exception e)
        {
            callbackFailure = e;
            mayRunAgain = false;
        }

        return mayRunAgain || IsClientTimeout(failure) ? ItemOutcome.Overloaded : ItemOutcome.Failed;
    }

    /// <summary>
    /// What the limit learns from an attempt whose <see cref="FanOutOptions.ItemTimeout"/> passed: an overload (the downstream
    /// was too slow, so an adaptive limit backs off), and never a re-run, whatever the overload test says of a
    /// <see cref="TimeoutException"/>: the downstream may have done the work. The overload test is not consulted.
    /// </summary>
    public static ItemOutcome JudgeItemTimeout(out bool mayRunAgain)
    {
        mayRunAgain = false;
        return ItemOutcome.Overloaded;
    }

    /// <summary>
    /// True for a timeout the client declared: the downstream was too slow, which backs an adaptive limit off, but it may
    /// have done the work.
    /// </summary>
    public static bool IsClientTimeout(Exception failure) => failure switch
    {
        TimeoutException => true,
        OperationCanceledException { InnerException: TimeoutException } => true,
        _ => false,
    };

    /// <summary>How long to wait before the next attempt; null when the downstream asked for a longer pause than a fan-out sits out.</summary>
    public static TimeSpan? DelayBeforeAttempt(int attempt, Exception failure, DateTimeOffset now)
    {
        var hint = RetryAfterHint.From(failure, now);
        if (hint > OverloadBackoff.MaxHonouredRetryAfter)
        {
            return null;
        }

        return hint ?? OverloadBackoff.Delay(attempt);
    }
}
