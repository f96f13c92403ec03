namespace FanOut.AspNetCore;

/// <summary>How much a request matters when the service must refuse some: the lowest is refused first.</summary>
public enum RequestPriority
{
    /// <summary>Refused first: its queue room closes at half the fill where <see cref="Normal"/> requests start to be refused.</summary>
    Sheddable = 0,

    /// <summary>The default: gradually refused as the queue fills from <see cref="FanOutConcurrencyOptions.RejectionStart"/> to full.</summary>
    Normal = 1,

    /// <summary>Admitted while any room exists: the lower priorities leave it a reserve of the limit (<see cref="FanOutConcurrencyOptions.PriorityReserve"/>), it is served first from the queue, never refused at random, and when the queue is full it takes the place of the newest lower-priority request.</summary>
    Critical = 2,
}
