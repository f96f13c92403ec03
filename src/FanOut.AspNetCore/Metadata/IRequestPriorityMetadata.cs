namespace FanOut.AspNetCore;

/// <summary>Endpoint metadata: the priority of the endpoint's requests under <c>UseFanOutConcurrency</c>.</summary>
public interface IRequestPriorityMetadata
{
    /// <summary>The priority.</summary>
    RequestPriority Priority { get; }
}
