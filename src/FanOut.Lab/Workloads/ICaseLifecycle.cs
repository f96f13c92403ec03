using FanOut.Lab.Measurement;

namespace FanOut.Lab.Workloads;

/// <summary>The per-case lifecycle of a workload that owns real resources: a server, a database, files.</summary>
/// <remarks>
/// <para>Optional: the runner calls it only when a workload implements it, so the seed workloads are untouched.
/// The order is <see cref="SetUpAsync"/> once, then around every run (warm-ups included) <see cref="RunStarting"/>
/// and <see cref="RunFinished"/>, then <see cref="IAsyncDisposable.DisposeAsync"/> once, always, even when set-up
/// or a run failed or was cancelled.</para>
/// <para>A workload's constructor must stay cheap and side-effect free: the lab also creates workloads just to
/// read their name and parameters (failed cases, refusals, <c>fanout list</c>). Resources are made in
/// <see cref="SetUpAsync"/>. <see cref="RunStarting"/> and <see cref="RunFinished"/> run outside the timed window.</para>
/// </remarks>
public interface ICaseLifecycle : IAsyncDisposable
{
    /// <summary>Creates the case's resources (starts the server, writes the files); called once, before the warm-up.</summary>
    Task SetUpAsync(CancellationToken cancellationToken);

    /// <summary>Resets per-run state (outcome counters, server statistics, rows to rewrite) right before a run.</summary>
    void RunStarting();

    /// <summary>Collects what the run did, right after it; <paramref name="elapsedMs"/> is the run's wall-clock time.</summary>
    IoRunMetrics RunFinished(double elapsedMs);
}
