using System.Collections.Concurrent;
using System.Diagnostics.Tracing;

using FanOut.Diagnostics;

namespace FanOut.Tests.Infrastructure;

/// <summary>One LimitChanged event as the event source wrote it.</summary>
internal sealed record LimitChange(string Kind, string Name, int From, int To, string Reason, double WindowMedianMs, double BaselineMs, int InFlight, long Sequence);

/// <summary>Collects the LimitChanged events of the limit named <c>name</c> (in-process listeners are called synchronously; other tests' limits are told apart by name).</summary>
internal sealed class LimitChangeListener(string name) : EventListener
{
    private readonly ConcurrentQueue<LimitChange> _changes = new();

    public IReadOnlyCollection<LimitChange> Changes => _changes;

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == FanOutEvents.SourceName)
        {
            EnableEvents(eventSource, EventLevel.Informational);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs e)
    {
        if (e.EventId != FanOutEvents.LimitChangedId || e.Payload is not { } p || (string?)p[1] != name)
        {
            return;
        }

        Assert.Equal(FanOutEvents.LimitChanged, e.EventName);
        _changes.Enqueue(new((string)p[0]!, (string)p[1]!, (int)p[2]!, (int)p[3]!, (string)p[4]!, (double)p[5]!, (double)p[6]!, (int)p[7]!, (long)p[8]!));
    }
}
