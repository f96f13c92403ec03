using System.Diagnostics;

namespace FanOut.Diagnostics;

/// <summary>
/// The "FanOut" <see cref="ActivitySource"/> and what the run writes on its activities. A run asks
/// <see cref="ActivitySource.HasListeners"/> once, when it starts; with no listener nothing here is called per item.
/// </summary>
internal static class FanOutTracing
{
    internal static readonly ActivitySource Source = new(FanOutActivities.SourceName, typeof(FanOutTracing).Assembly.GetName().Version?.ToString());

    /// <summary>Starts a call's activity, a child of the caller's current activity; null when no listener samples it.</summary>
    public static Activity? StartRun(ConcurrencyLimit limit)
    {
        var activity = Source.StartActivity(FanOutActivities.Run, ActivityKind.Internal);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag(FanOutActivities.LimitKindTag, limit.Kind);
            activity.SetTag(FanOutActivities.LimitCurrentTag, limit.Current);
        }

        return activity;
    }

    /// <summary>Starts one attempt's activity under the call's (or under the current activity when the call's was not sampled).</summary>
    public static Activity? StartItem(Activity? run, ConcurrencyLimit limit, long index, int attempt)
    {
        var activity = run is null
            ? Source.StartActivity(FanOutActivities.Item, ActivityKind.Internal)
            : Source.StartActivity(FanOutActivities.Item, ActivityKind.Internal, run.Context);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag(FanOutActivities.ItemIndexTag, index);
            activity.SetTag(FanOutActivities.ItemAttemptTag, attempt);
            activity.SetTag(FanOutActivities.LimitKindTag, limit.Kind);
            activity.SetTag(FanOutActivities.LimitCurrentTag, limit.Current);
        }

        return activity;
    }

    /// <summary>Ends one attempt's activity: the overload and retry events, the error status, then Stop.</summary>
    public static void StopItem(Activity activity, Exception? failure, bool overloaded, bool retrying, int nextAttempt, TimeSpan retryDelay)
    {
        if (overloaded)
        {
            activity.AddEvent(new ActivityEvent(FanOutActivities.OverloadEvent));
        }

        if (retrying)
        {
            activity.AddEvent(new ActivityEvent(FanOutActivities.RetryEvent, tags: new ActivityTagsCollection
            {
                [FanOutActivities.ItemAttemptTag] = nextAttempt,
                [FanOutActivities.RetryDelayTag] = retryDelay.TotalSeconds,
            }));
        }

        if (failure is not null)
        {
            Fail(activity, failure); // a rejected attempt failed too, though its item runs again
        }

        activity.Stop();
    }

    /// <summary>Ends a call's activity: Error with the first exception when it faulted, Error "canceled" when it was canceled.</summary>
    public static void StopRun(Activity activity, long itemCount, bool canceled, IReadOnlyList<Exception>? exceptions)
    {
        activity.SetTag(FanOutActivities.ItemCountTag, itemCount);
        if (canceled)
        {
            activity.SetStatus(ActivityStatusCode.Error, "canceled");
        }
        else if (exceptions is { Count: > 0 })
        {
            Fail(activity, exceptions[0]);
        }

        activity.Stop();
    }

    private static void Fail(Activity activity, Exception failure)
    {
        activity.SetStatus(ActivityStatusCode.Error, failure.Message);
        activity.AddException(failure);
    }
}
