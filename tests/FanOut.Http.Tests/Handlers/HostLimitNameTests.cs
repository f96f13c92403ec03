using System.Collections.Concurrent;
using System.Diagnostics.Tracing;
using System.Net;
using System.Net.Http.Headers;

using FanOut.Diagnostics;

namespace FanOut.Http.Tests.Handlers;

/// <summary>A host's default limit is named after the host, so "why did this host's limit drop" is answered by the changes published under its name.</summary>
public sealed class HostLimitNameTests
{
    [Fact]
    public async Task Get_429FromAHost_PublishesTheLimitsChangeUnderTheHostsName()
    {
        // A host no other test uses: the event source is process-wide, and the name tells this host's limit apart.
        var host = $"h{Guid.NewGuid():N}.test";
        using var listener = new LimitChangeListener();
        var server = new ScriptedServer(
            ScriptedServer.Status(HttpStatusCode.TooManyRequests, r => r.Headers.RetryAfter = new RetryConditionHeaderValue(TimeSpan.Zero)),
            ScriptedServer.Status(HttpStatusCode.OK));
        var limits = new HostConcurrencyLimits();
        using var client = new HttpClient(new FanOutLimitHandler(limits) { InnerHandler = server }) { BaseAddress = new Uri($"http://{host}/") };

        using var response = await client.GetAsync("item/1").WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var changes = listener.Changes.Where(c => c.Name == $"http:{host}:80").ToArray();
        Assert.NotEmpty(changes);
        Assert.All(changes, c => Assert.Equal("adaptive", c.Kind));
        Assert.Contains(changes, c => c.To < c.From); // the 429 cut the host's limit, and the cut says whose it was
        Assert.DoesNotContain(listener.Changes, c => c.Name.Contains(host, StringComparison.Ordinal) && c.Name != $"http:{host}:80");
    }

    /// <summary>One LimitChanged event as the event source wrote it.</summary>
    private sealed record Change(string Kind, string Name, int From, int To, string Reason);

    /// <summary>Collects every LimitChanged event (in-process listeners are called synchronously, on the thread that changed the limit).</summary>
    private sealed class LimitChangeListener : EventListener
    {
        private readonly ConcurrentQueue<Change> _changes = new();

        public IReadOnlyCollection<Change> Changes => _changes;

        protected override void OnEventSourceCreated(EventSource eventSource)
        {
            if (eventSource.Name == FanOutEvents.SourceName)
            {
                EnableEvents(eventSource, EventLevel.Informational);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs eventData)
        {
            // The queue is null while the base constructor enables the source: an event then is not this test's.
            if (_changes is null || eventData.EventId != FanOutEvents.LimitChangedId || eventData.Payload is not { } p)
            {
                return;
            }

            _changes.Enqueue(new((string)p[0]!, (string)p[1]!, (int)p[2]!, (int)p[3]!, (string)p[4]!));
        }
    }
}
