namespace FanOut.AspNetCore;

/// <summary>Sets the priority of an endpoint's requests (a controller, an action, a minimal API handler).</summary>
[AttributeUsage(AttributeTargets.Class | AttributeTargets.Method, AllowMultiple = false, Inherited = true)]
public sealed class RequestPriorityAttribute : Attribute, IRequestPriorityMetadata
{
    /// <summary>Sets <paramref name="priority"/>.</summary>
    /// <param name="priority">One of <see cref="RequestPriority"/>'s values.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="priority"/> is not a defined value.</exception>
    public RequestPriorityAttribute(RequestPriority priority)
    {
        Priority = RequestPriorityCheck.Defined(priority, nameof(priority));
    }

    /// <inheritdoc/>
    public RequestPriority Priority { get; }
}
