using FanOut.Execution;

namespace FanOut;

/// <summary>What code inside a FanOut call's bodies (an HTTP handler, a lease, a resilience pipeline) can learn of the call it runs for.</summary>
/// <remarks>
/// One layer re-runs an overloaded item, never two: an inner layer that would send the work again after an overload (a
/// 429 or 503) first asks <see cref="WillRerun"/>, and leaves the re-run to the call when the call makes it. One item is then
/// sent at most <c>1 + OverloadRetries</c> times, or <c>1 + MaxResends</c> where only the inner layer re-sends, never the
/// product of the two. FanOut.Http's handler does this.
/// </remarks>
public static class FanOutItem
{
    /// <summary>True when the calling code runs in the flow of a FanOut call's workers (its bodies, and what they call).</summary>
    public static bool IsRunning => CallScope.Current is not null;

    /// <summary>
    /// True when the FanOut call the calling code runs for will run the item again if its body fails with
    /// <paramref name="failure"/>: the call re-runs at all (<see cref="FanOutOptions.OverloadRetries"/> above 0) and its limit
    /// judges <paramref name="failure"/> an overload. False outside a FanOut call.
    /// </summary>
    /// <param name="failure">The failure the body would throw (for a 429, the <see cref="System.Net.Http.HttpRequestException"/> an HttpClient throws).</param>
    /// <exception cref="ArgumentNullException"><paramref name="failure"/> is null.</exception>
    public static bool WillRerun(Exception failure)
    {
        ArgumentNullException.ThrowIfNull(failure);
        return CallScope.Current?.WillRerun(failure) ?? false;
    }
}
