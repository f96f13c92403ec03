using System.Collections.Concurrent;
using System.Diagnostics;

using FanOut.Diagnostics;
using FanOut.Tests.Diagnostics;
using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Tracing;

/// <summary>
/// Issue 20 item 7: the "FanOut" activity source. An <see cref="ActivityListener"/> is process-wide, so these tests run
/// alone and keep only the activities of their own trace (a parent activity each test starts).
/// </summary>
[Collection(nameof(SerialCollection))]
public sealed class FanOutTracingTests : IDisposable
{
    private const string TestSourceName = "FanOut.Tests.Tracing";
    private static readonly ActivitySource s_test = new(TestSourceName);
    private readonly ConcurrentQueue<Activity> _stopped = new();
    private readonly ActivityListener _listener;
    private ActivitySamplingResult _fanOutSampling = ActivitySamplingResult.AllDataAndRecorded;
    private bool _listenToFanOut = true;

    public FanOutTracingTests()
    {
        _listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name == TestSourceName || (source.Name == FanOutActivities.SourceName && _listenToFanOut),
            Sample = (ref ActivityCreationOptions<ActivityContext> options) =>
                options.Source.Name == FanOutActivities.SourceName ? _fanOutSampling : ActivitySamplingResult.AllDataAndRecorded,
            ActivityStopped = _stopped.Enqueue,
        };
    }

    public void Dispose() => _listener.Dispose();

    [Fact]
    public async Task FanOutAsync_Listened_OneActivityPerCallAndOnePerItemUnderIt()
    {
        ActivitySource.AddActivityListener(_listener);
        using var parent = s_test.StartActivity("test")!;
        var currentInBodies = new ConcurrentDictionary<int, Activity?>();

        await Enumerable.Range(0, 5).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                currentInBodies[i] = Activity.Current;
                await Task.Yield();
            },
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(3) }).WithTimeout();

        Assert.Same(parent, Activity.Current); // the call's activity never became the caller's
        var run = Assert.Single(Ours(parent), a => a.OperationName == FanOutActivities.Run);
        Assert.Equal(parent.SpanId, run.ParentSpanId);
        Assert.Equal("fixed", run.GetTagItem(FanOutActivities.LimitKindTag));
        Assert.Equal(3, run.GetTagItem(FanOutActivities.LimitCurrentTag));
        Assert.Equal(5L, run.GetTagItem(FanOutActivities.ItemCountTag));
        Assert.Equal(ActivityStatusCode.Unset, run.Status);

        var items = Ours(parent).Where(a => a.OperationName == FanOutActivities.Item).ToList();
        Assert.Equal([0L, 1, 2, 3, 4], items.Select(a => (long)a.GetTagItem(FanOutActivities.ItemIndexTag)!).Order());
        Assert.All(items, a =>
        {
            Assert.Equal(run.SpanId, a.ParentSpanId);
            Assert.Equal(0, a.GetTagItem(FanOutActivities.ItemAttemptTag));
            Assert.Equal("fixed", a.GetTagItem(FanOutActivities.LimitKindTag));
            Assert.Equal(3, a.GetTagItem(FanOutActivities.LimitCurrentTag));
            Assert.Empty(a.Events);
        });

        // Each body ran inside its own item's activity (so its own spans, an HttpClient call's, are the item's children).
        Assert.All(currentInBodies, pair => Assert.Equal((long)pair.Key, pair.Value?.GetTagItem(FanOutActivities.ItemIndexTag)));
    }

    [Fact]
    public async Task FanOutAsync_ExecutionContextFlowSuppressed_ItemsStillChildrenOfTheCall()
    {
        ActivitySource.AddActivityListener(_listener);
        using var parent = s_test.StartActivity("test")!;
        Task task;
        using (ExecutionContext.SuppressFlow())
        {
            task = Enumerable.Range(0, 3).ToArray().FanOutAsync((_, _) => ValueTask.CompletedTask, new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2) });
        }

        await task.WithTimeout();
        var run = Assert.Single(Ours(parent), a => a.OperationName == FanOutActivities.Run);
        var items = Ours(parent).Where(a => a.OperationName == FanOutActivities.Item).ToList();
        Assert.Equal(3, items.Count);
        Assert.All(items, a => Assert.Equal(run.SpanId, a.ParentSpanId));
    }

    [Fact]
    public async Task FanOutStream_Listened_OneRunActivityPerEnumerationStoppedBeforeTheEnd()
    {
        ActivitySource.AddActivityListener(_listener);
        using var parent = s_test.StartActivity("test")!;
        var stream = Enumerable.Range(0, 4).FanOutStream((i, _) => new ValueTask<int>(i), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(2), Ordered = true });

        await foreach (var _ in stream.WithCancellation(CancellationToken.None))
        {
        }

        Assert.Same(parent, Activity.Current);
        await foreach (var _ in stream.WithCancellation(CancellationToken.None))
        {
        }

        var runs = Ours(parent).Where(a => a.OperationName == FanOutActivities.Run).ToList();
        Assert.Equal(2, runs.Count);
        Assert.Equal(8, Ours(parent).Count(a => a.OperationName == FanOutActivities.Item));
        Assert.All(Ours(parent).Where(a => a.OperationName == FanOutActivities.Item), a => Assert.Contains(runs, r => r.SpanId == a.ParentSpanId));
    }

    [Fact]
    public async Task FanOutAsync_OverloadedThenRetried_EventsOnTheRejectedAttemptAndANewAttemptActivity()
    {
        ActivitySource.AddActivityListener(_listener);
        using var parent = s_test.StartActivity("test")!;
        var attempts = 0;

        await new[] { 1 }.FanOutAsync(
            (_, _) => Interlocked.Increment(ref attempts) == 1 ? throw new OverloadedException("busy", TimeSpan.Zero) : ValueTask.CompletedTask,
            new FanOutOptions { Limit = ConcurrencyLimit.Adaptive() }).WithTimeout();

        var items = Ours(parent).Where(a => a.OperationName == FanOutActivities.Item)
            .OrderBy(a => (int)a.GetTagItem(FanOutActivities.ItemAttemptTag)!).ToList();
        Assert.Equal(2, items.Count);
        var rejected = items[0];
        // The attempt's overload backed the adaptive limit off, and its activity says so first (issue 36: the reason in a trace).
        Assert.Equal(
            [FanOutActivities.LimitChangeEvent, FanOutActivities.OverloadEvent, FanOutActivities.RetryEvent, "exception"],
            rejected.Events.Select(e => e.Name));
        Assert.Equal(nameof(LimitChangeReason.Overload), rejected.Events.First().Tags.Single(t => t.Key == FanOutActivities.LimitReasonTag).Value);
        var retry = rejected.Events.Single(e => e.Name == FanOutActivities.RetryEvent);
        Assert.Equal(1, retry.Tags.Single(t => t.Key == FanOutActivities.ItemAttemptTag).Value);
        Assert.Equal(ActivityStatusCode.Error, rejected.Status);
        Assert.Equal("busy", rejected.StatusDescription);

        Assert.Equal(1, items[1].GetTagItem(FanOutActivities.ItemAttemptTag));
        Assert.Empty(items[1].Events);
        Assert.Equal(ActivityStatusCode.Unset, items[1].Status);
        Assert.Equal(ActivityStatusCode.Unset, Assert.Single(Ours(parent), a => a.OperationName == FanOutActivities.Run).Status);
    }

    [Fact]
    public async Task FanOutAsync_ItemFailsAndAnotherTimesOut_ErrorStatusWithTheException()
    {
        ActivitySource.AddActivityListener(_listener);
        using var parent = s_test.StartActivity("test")!;
        var time = new FakeTimeProvider();
        var started = 0;
        var task = new[] { 0, 1 }.FanOutAsync(
            async (i, ct) =>
            {
                Interlocked.Increment(ref started);
                if (i == 0)
                {
                    throw new InvalidOperationException("item 0 failed");
                }

                await Task.Delay(Timeout.Infinite, ct);
            },
            new FanOutOptions
            {
                Limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = time, InitialLimit = 4 }),
                ItemTimeout = TimeSpan.FromSeconds(1),
                Errors = ErrorMode.RunAll,
            });

        await Wait.UntilAsync(() => Volatile.Read(ref started) == 2, "both items started");
        time.Advance(TimeSpan.FromSeconds(1));
        await Assert.ThrowsAsync<FanOutException>(() => task.WithTimeout());

        var items = Ours(parent).Where(a => a.OperationName == FanOutActivities.Item)
            .ToDictionary(a => (long)a.GetTagItem(FanOutActivities.ItemIndexTag)!);
        Assert.Equal(ActivityStatusCode.Error, items[0].Status);
        Assert.Equal("item 0 failed", items[0].StatusDescription);
        var exception = Assert.Single(items[0].Events);
        Assert.Equal("exception", exception.Name);
        Assert.Equal(typeof(InvalidOperationException).FullName, exception.Tags.Single(t => t.Key == "exception.type").Value);

        Assert.Equal(ActivityStatusCode.Error, items[1].Status);
        Assert.Equal([FanOutActivities.LimitChangeEvent, FanOutActivities.OverloadEvent, "exception"], items[1].Events.Select(e => e.Name)); // a timeout backs off, no retry
        Assert.Equal(nameof(LimitChangeReason.Overload), items[1].Events.First().Tags.Single(t => t.Key == FanOutActivities.LimitReasonTag).Value);
        Assert.Contains("Item 1 timed out", items[1].StatusDescription);

        var run = Assert.Single(Ours(parent), a => a.OperationName == FanOutActivities.Run);
        Assert.Equal(ActivityStatusCode.Error, run.Status);
        Assert.Equal(typeof(FanOutException).FullName, run.Events.Single().Tags.Single(t => t.Key == "exception.type").Value);
    }

    [Theory]
    [InlineData(false, ActivitySamplingResult.AllDataAndRecorded)]
    [InlineData(true, ActivitySamplingResult.None)]
    public async Task FanOutAsync_NotListenedOrNotSampled_NoActivityAndBodiesSeeTheCallersActivity(bool listen, ActivitySamplingResult sampling)
    {
        _listenToFanOut = listen;
        _fanOutSampling = sampling;
        ActivitySource.AddActivityListener(_listener);
        using var parent = s_test.StartActivity("test")!;
        var currentInBodies = new ConcurrentBag<Activity?>();

        await Enumerable.Range(0, 20).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                currentInBodies.Add(Activity.Current);
                await Task.Yield();
            },
            new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) }).WithTimeout();

        Assert.Empty(Ours(parent));
        Assert.All(currentInBodies, a => Assert.Same(parent, a));
    }

    /// <summary>Stopped activities of this test's trace, except the test's own.</summary>
    private IEnumerable<Activity> Ours(Activity parent) => _stopped.Where(a => a.TraceId == parent.TraceId && a != parent);
}
