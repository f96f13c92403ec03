namespace FanOut.AspNetCore.Admission;

/// <summary>A request waiting in <see cref="RequestAdmission"/>'s queue for a permit.</summary>
/// <remarks>
/// Ownership: whoever takes it out of its queue (under the admission's lock) completes it, exactly once: the pump with a
/// permit, the arrival that evicts it, its own cancellation or timeout. So a permit handed over always reaches a request
/// that is still waiting, and a request that left the queue never receives one.
/// </remarks>
internal sealed class QueuedRequest
{
    private readonly TaskCompletionSource<AdmissionStatus> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private CancellationTokenRegistration _abortRegistration;
    private readonly RequestAdmission _owner;
    private ITimer? _timeout;

    public QueuedRequest(RequestAdmission owner, RequestPriority priority)
    {
        _owner = owner;
        Priority = priority;
        Node = new LinkedListNode<QueuedRequest>(this);
    }

    public RequestPriority Priority { get; }

    /// <summary>Its place in the queue of its priority; <c>Node.List</c> is null once it left (under the admission's lock).</summary>
    public LinkedListNode<QueuedRequest> Node { get; }

    public Task<AdmissionStatus> Task => _completion.Task;

    /// <summary>Completes the wait; called once, by whoever took the request out of the queue, outside the lock.</summary>
    public void Complete(AdmissionStatus status)
    {
        var completed = _completion.TrySetResult(status);
        System.Diagnostics.Debug.Assert(completed, "a queued request is completed only by whoever removed it from the queue");
    }

    /// <summary>Starts watching the client's abort and the queue timeout; either withdraws the request if it still waits.</summary>
    /// <remarks>A token already canceled runs the withdrawal at once, on this thread.</remarks>
    public void Arm(CancellationToken aborted, TimeProvider time, TimeSpan timeout)
    {
        _timeout = time.CreateTimer(static state => ((QueuedRequest)state!).OnTimeout(), this, timeout, Timeout.InfiniteTimeSpan);
        _abortRegistration = aborted.UnsafeRegister(static state => ((QueuedRequest)state!).OnAborted(), this);
    }

    /// <summary>Stops watching; called by the waiting request once its wait is over.</summary>
    public void Disarm()
    {
        _abortRegistration.Dispose();
        _timeout?.Dispose();
    }

    private void OnTimeout() => _owner.Withdraw(this, AdmissionStatus.Refused, timedOut: true);

    private void OnAborted() => _owner.Withdraw(this, AdmissionStatus.Canceled, timedOut: false);
}
