using System.Collections.Concurrent;

using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Deadlines;

/// <summary>
/// Issue 20 item 6: <see cref="FanOutOptions.ItemTimeout"/> cancels a body's token after the timeout, on the limit's clock,
/// and fails its item with a <see cref="TimeoutException"/> naming the index; a timed-out item is never run again.
/// Every test drives a <see cref="FakeTimeProvider"/> through an adaptive limit, except the one that proves the system clock's path.
/// </summary>
public sealed class ItemTimeoutTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(5);

    public static TheoryData<TimeSpan> InvalidTimeouts() =>
        [TimeSpan.Zero, TimeSpan.FromTicks(-1), TimeSpan.FromSeconds(-3), TimeSpan.FromMilliseconds(uint.MaxValue), TimeSpan.MaxValue];

    [Theory]
    [MemberData(nameof(InvalidTimeouts))]
    public void FanOutAsync_InvalidItemTimeout_ThrowsNamingTheValueAndTheChoices(TimeSpan timeout)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(
            () => { _ = new[] { 1 }.FanOutAsync((_, _) => ValueTask.CompletedTask, new FanOutOptions { ItemTimeout = timeout }); });

        Assert.Equal(nameof(FanOutOptions.ItemTimeout), error.ParamName);
        Assert.Equal(timeout, error.ActualValue);
        Assert.Contains("greater than zero", error.Message);
        Assert.Contains("Timeout.InfiniteTimeSpan", error.Message);
    }

    [Fact]
    public async Task FanOutAsync_InfiniteOrNullItemTimeout_MeansNone()
    {
        foreach (TimeSpan? none in new TimeSpan?[] { null, System.Threading.Timeout.InfiniteTimeSpan })
        {
            CancellationToken seen = default;
            await new[] { 1 }.FanOutAsync((_, ct) => { seen = ct; return ValueTask.CompletedTask; }, new FanOutOptions { ItemTimeout = none }).WithTimeout();
            Assert.True(seen.CanBeCanceled); // the run's own token, which every body gets without a deadline
        }
    }

    [Fact]
    public async Task FanOutAsync_BodyOutlivesItsDeadline_FailsWithTimeoutNamingItsIndexAndTheOthersSucceed()
    {
        var time = new FakeTimeProvider();
        var started = new ConcurrentDictionary<int, CancellationToken>();
        var task = Enumerable.Range(0, 6).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                started[i] = ct;
                if (i == 3)
                {
                    await Task.Delay(System.Threading.Timeout.Infinite, ct); // waits for its deadline
                }

                return i * 10;
            },
            Options(time, ErrorMode.RunAll));

        await Wait.UntilAsync(() => started.Count == 6, "every item started");
        time.Advance(Timeout - TimeSpan.FromTicks(1));
        await Task.Delay(20);
        Assert.False(started[3].IsCancellationRequested, "the deadline has not passed yet");
        Assert.False(task.IsCompleted);

        time.Advance(TimeSpan.FromTicks(1));
        var error = await Assert.ThrowsAsync<FanOutException<int>>(() => task.WithTimeout());

        var failure = Assert.Single(error.Failures);
        Assert.Equal(3, failure.Index);
        var timeout = Assert.IsType<TimeoutException>(failure.Exception);
        Assert.Contains("Item 3", timeout.Message);
        Assert.Contains("5000 ms", timeout.Message);
        Assert.IsAssignableFrom<OperationCanceledException>(timeout.InnerException);
        Assert.Equal([0, 10, 20, 0, 40, 50], error.Results);
    }

    [Fact]
    public async Task FanOutAsync_ItemTimesOut_NeverRunsAgainEvenWhenTimeoutsCountAsOverloads()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions
        {
            TimeProvider = time,
            InitialLimit = 8,
            IsOverload = e => e is TimeoutException || AdaptiveLimitOptions.IsOverloadByDefault(e), // "my timeouts may re-run"
        });
        var runs = 0;
        var task = new[] { 1 }.FanOutAsync(
            async (_, ct) =>
            {
                Interlocked.Increment(ref runs);
                await Task.Delay(System.Threading.Timeout.Infinite, ct);
            },
            new FanOutOptions { Limit = limit, ItemTimeout = Timeout });

        await Wait.UntilAsync(() => Volatile.Read(ref runs) == 1, "the item started");
        time.Advance(Timeout);

        // Keep the clock going (past any backoff and any later deadline) until the run ends: a re-run would show in runs.
        var giveUp = DateTime.UtcNow + Wait.Timeout; // a hang guard, not a measurement
        while (!task.IsCompleted && DateTime.UtcNow < giveUp)
        {
            await Task.Delay(5);
            time.Advance(TimeSpan.FromSeconds(1));
        }

        var timeout = await Assert.ThrowsAsync<TimeoutException>(() => task);
        Assert.Contains("Item 0", timeout.Message);
        Assert.Equal(1, runs);
    }

    [Fact]
    public async Task FanOutAsync_ItemTimesOut_AdaptiveLimitBacksOffAsOnAnOverload()
    {
        var time = new FakeTimeProvider();
        var limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = time, InitialLimit = 8 });
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var running = 0;
        var task = Source().FanOutAsync(
            async (i, ct) =>
            {
                Interlocked.Increment(ref running);
                await (i == 0 ? Task.Delay(System.Threading.Timeout.Infinite, ct) : release.Task.WaitAsync(ct));
            },
            new FanOutOptions { Limit = limit, ItemTimeout = Timeout, Errors = ErrorMode.RunAll });

        // Item 0 starts at 0 s (deadline 5 s), items 1..3 at 3 s (deadline 8 s).
        await Wait.UntilAsync(() => Volatile.Read(ref running) == 1, "item 0 started");
        time.Advance(TimeSpan.FromSeconds(3));
        gate.SetResult();
        await Wait.UntilAsync(() => Volatile.Read(ref running) == 4, "every item started");
        var before = limit.Current;
        Assert.True(before >= 4, $"the limit holds every item ({before})");

        time.Advance(TimeSpan.FromSeconds(2));
        await Wait.UntilAsync(() => limit.InFlight == 3, "the timed-out item settled");

        // A plain failure leaves an adaptive limit where it is; an overload lowers it to the bodies still running.
        Assert.True(limit.Current <= 3, $"the limit backed off from {before} (it is {limit.Current})");
        release.SetResult();
        var error = await Assert.ThrowsAsync<FanOutException>(() => task.WithTimeout());
        Assert.Equal(0, Assert.Single(error.Failures).Index);

        async IAsyncEnumerable<int> Source()
        {
            yield return 0;
            await gate.Task;
            yield return 1;
            yield return 2;
            yield return 3;
        }
    }

    [Fact]
    public async Task FanOutAsync_BodyIgnoresItsToken_TimesOutWhenItReturns()
    {
        var time = new FakeTimeProvider();
        var release = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        CancellationToken token = default;
        var task = new[] { 7 }.FanOutAsync(
            async (_, ct) =>
            {
                token = ct;
                return await release.Task; // ignores its token
            },
            Options(time, ErrorMode.FailFast));

        await Wait.UntilAsync(() => token.CanBeCanceled, "the item started");
        time.Advance(Timeout);
        Assert.True(token.IsCancellationRequested, "the deadline canceled the body's token");
        await Task.Delay(20);
        Assert.False(task.IsCompleted, "the body is never abandoned: the run waits for it");

        release.SetResult(42);
        var timeout = await Assert.ThrowsAsync<TimeoutException>(() => task.WithTimeout());
        Assert.Contains("Item 0", timeout.Message);
        Assert.Null(timeout.InnerException); // the body returned; it threw nothing
    }

    [Fact]
    public async Task FanOutAsync_CallerCancelsBeforeTheDeadline_EndsCanceledNotTimedOut()
    {
        var time = new FakeTimeProvider();
        using var caller = new CancellationTokenSource();
        var started = 0;
        var task = Enumerable.Range(0, 3).ToArray().FanOutAsync(
            async (_, ct) =>
            {
                Interlocked.Increment(ref started);
                await Task.Delay(System.Threading.Timeout.Infinite, ct);
            },
            Options(time, ErrorMode.RunAll),
            caller.Token);

        await Wait.UntilAsync(() => Volatile.Read(ref started) == 3, "every item started");
        caller.Cancel();

        var settled = await task.Settled();
        Assert.True(settled.IsCanceled, $"the run is canceled, not faulted: {settled.Exception}");
    }

    [Fact]
    public async Task FanOutAsync_FailFastCancelsTheOthers_TheyEndCanceledNotTimedOut()
    {
        var time = new FakeTimeProvider();
        var started = 0;
        var task = Enumerable.Range(0, 3).ToArray().FanOutAsync(
            async (i, ct) =>
            {
                if (Interlocked.Increment(ref started) == 3)
                {
                    throw new InvalidOperationException("item failed");
                }

                await Task.Delay(System.Threading.Timeout.Infinite, ct);
            },
            Options(time, ErrorMode.FailFast));

        var settled = await task.Settled();
        Assert.IsType<InvalidOperationException>(settled.Exception!.InnerExceptions[0]);
        Assert.DoesNotContain(settled.Exception.InnerExceptions, e => e is TimeoutException);
        Assert.All(settled.Exception.InnerExceptions.Skip(1), e => Assert.IsAssignableFrom<OperationCanceledException>(e));
    }

    [Fact]
    public async Task FanOutAsync_RetryAfterAnOverload_GetsAFreshDeadline()
    {
        var time = new FakeTimeProvider();
        var attempts = new ConcurrentQueue<CancellationToken>();
        var options = Options(time, ErrorMode.FailFast);
        var task = new[] { 1 }.FanOutAsync(
            async (_, ct) =>
            {
                attempts.Enqueue(ct);
                if (attempts.Count == 1)
                {
                    throw new OverloadedException("busy", TimeSpan.FromSeconds(4));
                }

                await Task.Delay(System.Threading.Timeout.Infinite, ct);
            },
            options);

        await Wait.UntilAsync(() => attempts.Count == 1, "the first attempt ran");
        await Wait.UntilAsync(() => options.Limit!.InFlight == 0, "the overloaded item gave its permit back");
        await Task.Delay(50); // the worker starts the hint's delay on the fake clock just after it gave its permit back
        time.Advance(TimeSpan.FromSeconds(4));
        await Wait.UntilAsync(() => attempts.Count == 2, "the item ran again after the hint");

        // 4 s after the first attempt started: an attempt-long deadline from the first attempt would fire at 5 s.
        time.Advance(TimeSpan.FromSeconds(4));
        await Task.Delay(20);
        Assert.False(attempts.Last().IsCancellationRequested, "the second attempt's deadline counts from its own start");
        time.Advance(TimeSpan.FromSeconds(1));
        var timeout = await Assert.ThrowsAsync<TimeoutException>(() => task.WithTimeout());
        Assert.Contains("Item 0", timeout.Message);
    }

    [Fact]
    public async Task FanOutStream_SystemClock_ReusedDeadlineStillFiresForTheLastItem()
    {
        // The system clock's path: one token source per worker, reset after every item that finished in time.
        var results = new List<int>();
        var options = new FanOutOptions { Limit = ConcurrencyLimit.Fixed(1), ItemTimeout = TimeSpan.FromMilliseconds(50), Errors = ErrorMode.RunAll };
        var error = await Assert.ThrowsAsync<FanOutException>(async () =>
        {
            await foreach (var r in Enumerable.Range(0, 200).FanOutStream(
                async (i, ct) =>
                {
                    if (i == 199)
                    {
                        await Task.Delay(System.Threading.Timeout.Infinite, ct);
                    }

                    return i;
                },
                options).WithCancellation(CancellationToken.None))
            {
                results.Add(r);
            }
        }).WaitAsync(Wait.Timeout);

        Assert.Equal(Enumerable.Range(0, 199), results);
        Assert.IsType<TimeoutException>(Assert.Single(error.Failures).Exception);
    }

    private static FanOutOptions Options(TimeProvider time, ErrorMode errors) => new()
    {
        Limit = ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { TimeProvider = time, InitialLimit = 8 }),
        ItemTimeout = Timeout,
        Errors = errors,
    };
}
