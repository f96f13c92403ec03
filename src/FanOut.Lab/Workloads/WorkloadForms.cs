namespace FanOut.Lab.Workloads;

/// <summary>The shapes of body a workload can offer a strategy.</summary>
[Flags]
public enum WorkloadForms
{
    /// <summary>None.</summary>
    None = 0,

    /// <summary>A synchronous body (<c>Action&lt;int&gt;</c>), what Parallel.For/ForEach take.</summary>
    Synchronous = 1,

    /// <summary>An asynchronous body (<c>Func&lt;int, CancellationToken, ValueTask&gt;</c>).</summary>
    Asynchronous = 2,

    /// <summary>Both.</summary>
    Both = Synchronous | Asynchronous,
}
