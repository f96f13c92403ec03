using FanOut.Execution;

namespace FanOut;

/// <summary>What code inside a FanOut item's body (an HTTP handler, a lease, a resilience pipeline) can learn of the item it runs for.</summary>
/// <remarks>
/// An item's re-runs are one budget across every layer: the run's own re-runs after an overload
/// (<see cref="FanOutOptions.OverloadRetries"/>) and the re-sends of a layer inside the body that asks here first (FanOut.Http's
/// handler does). One item is therefore sent at most <c>1 + OverloadRetries</c> times however many layers re-send.
/// </remarks>
public static class FanOutItem
{
    /// <summary>True when the calling code runs inside the body of a FanOut item.</summary>
    public static bool IsRunning => ItemScope.Current?.IsLending == true;

    /// <summary>Takes one of the current item's remaining re-runs, for an inner layer that would send the item's work again after an overload.</summary>
    /// <returns>
    /// True: the item had a re-run left and this call took it. False: it has none left (return the overload to the body, whose
    /// failure the run then settles), or the calling code runs in no FanOut item (see <see cref="IsRunning"/>: apply your own rules).
    /// </returns>
    public static bool TryTakeRetry() => ItemScope.Current is { IsLending: true } scope && scope.TryTakeRetry();
}
