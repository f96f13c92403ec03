namespace FanOut.AspNetCore;

/// <summary>The one check of a priority value, shared by the attribute, the endpoint extension and startup validation.</summary>
internal static class RequestPriorityCheck
{
    public static RequestPriority Defined(RequestPriority priority, string parameterName)
    {
        if (!Enum.IsDefined(priority))
        {
            throw new ArgumentOutOfRangeException(parameterName, (int)priority, $"Unknown request priority {(int)priority}: it must be one of {string.Join(", ", Enum.GetNames<RequestPriority>())}.");
        }

        return priority;
    }
}
