namespace FanOut.Execution;

/// <summary>A worker as <see cref="CallPermits"/> sees it: what it holds of the protocol, and nothing else.</summary>
internal abstract class PermitHolder
{
    /// <summary>What the worker holds; every transition is a <see cref="CallPermits"/> method, which alone writes it.</summary>
    internal WorkerHold Hold;

    /// <summary>True when the worker holds a permit, its own or borrowed: a body may start.</summary>
    public bool HoldsAnyPermit => (Hold & (WorkerHold.PoolPermit | WorkerHold.BorrowedPermit)) != 0;

    /// <summary>True while the worker holds a permit of the limit's pool.</summary>
    public bool HoldsPoolPermit => (Hold & WorkerHold.PoolPermit) != 0;
}
