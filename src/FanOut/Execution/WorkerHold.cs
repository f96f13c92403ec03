namespace FanOut.Execution;

/// <summary>
/// What one worker holds of its call's permit protocol. Written only by <see cref="CallPermits"/>, in the same step as
/// the call's count it mirrors; the legal combinations are <see cref="CallPermits"/>'s to assert.
/// </summary>
[Flags]
internal enum WorkerHold : byte
{
    /// <summary>Nothing: running an item under no permit of the protocol's, or between steps.</summary>
    None = 0,

    /// <summary>Counted among the call's seekers: on its way to a permit, so nobody is started for the room it will take.</summary>
    Seeking = 1,

    /// <summary>The call's one waiter at the limit (a seeker holding no permit).</summary>
    Waiter = 2,

    /// <summary>A place in the rate limiter's queue (a seeker holding no permit of the pool).</summary>
    LeaseQueued = 4,

    /// <summary>A permit of the limit's pool.</summary>
    PoolPermit = 8,

    /// <summary>The permit the call borrowed from an enclosing item of the same limit (never the pool's to give).</summary>
    BorrowedPermit = 16,

    /// <summary>Counted out of the call's active workers: it holds nothing and never will again.</summary>
    Retired = 32,
}
