using System.Collections;

namespace FanOut.Redis.Tests.Infrastructure;

/// <summary>Worker processes that are all killed (if still running) and disposed together.</summary>
public sealed class WorkerGroup(IEnumerable<WorkerProcess> workers) : IEnumerable<WorkerProcess>, IDisposable
{
    private readonly List<WorkerProcess> _workers = [.. workers];

    public IEnumerator<WorkerProcess> GetEnumerator() => _workers.GetEnumerator();

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    public void Dispose()
    {
        foreach (var worker in _workers)
        {
            worker.Dispose();
        }
    }
}
