using FanOut.AspNetCore.Admission;

using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>The pool's lag, read from probes a held queue stands in for (the fake clock moves, the pool does not).</summary>
public sealed class ThreadPoolLagTests
{
    [Fact]
    public void Current_ProbeStillWaiting_ReadsItsAgeAndOneProbeAtATime()
    {
        var time = new FakeTimeProvider();
        var queued = new List<IThreadPoolWorkItem>();
        using var lag = new ThreadPoolLag(time, queued.Add);

        Assert.Equal(TimeSpan.Zero, lag.Current);
        time.Advance(ThreadPoolLag.Interval);
        Assert.Single(queued);
        time.Advance(TimeSpan.FromMilliseconds(40)); // four more ticks while the probe waits: no second probe

        Assert.Single(queued);
        Assert.Equal(TimeSpan.FromMilliseconds(40), lag.Current);
    }

    [Fact]
    public void Current_AfterTheProbeRan_ReadsItsWaitUntilTheNextProbeRuns()
    {
        var time = new FakeTimeProvider();
        var queued = new List<IThreadPoolWorkItem>();
        using var lag = new ThreadPoolLag(time, queued.Add);
        time.Advance(ThreadPoolLag.Interval);
        time.Advance(TimeSpan.FromMilliseconds(25));

        queued[0].Execute();
        Assert.Equal(TimeSpan.FromMilliseconds(25), lag.Current);
        time.Advance(ThreadPoolLag.Interval);
        Assert.Equal(2, queued.Count);
        queued[1].Execute(); // a pool that keeps up again

        Assert.Equal(TimeSpan.Zero, lag.Current);
    }

    [Fact]
    public void Dispose_StopsTheProbes()
    {
        var time = new FakeTimeProvider();
        var queued = new List<IThreadPoolWorkItem>();
        var lag = new ThreadPoolLag(time, queued.Add);

        lag.Dispose();
        time.Advance(TimeSpan.FromSeconds(1));

        Assert.Empty(queued);
    }

    [Fact]
    public async Task Limiter_SuccessWhileThePoolLagsWithMoreRunningThanCores_IsAnOverloadForTheLimitOnly()
    {
        var time = new FakeTimeProvider();
        var queued = new List<IThreadPoolWorkItem>();
        var cores = Environment.ProcessorCount;
        var limit = new RecordingLimit(cores + 2);
        var options = new FanOutConcurrencyOptions { Limit = limit, QueueLimit = 0, TimeProvider = time };
        using var admission = new RequestAdmission(options, NullLogger.Instance, poolQueue: queued.Add);
        var logger = new ListLogger();
        var limiter = new FanOutConcurrencyLimiter(admission, options, logger);

        await ServeAsync(); // teaches a service time of 5 ms; no probe has run yet
        var running = await AcquireAsync(cores + 1); // admitted before the pool lags (a lagging pool holds new ones at the cores)
        time.Advance(ThreadPoolLag.Interval);
        time.Advance(TimeSpan.FromMilliseconds(20)); // the probe waits 20 ms: requests wait longer in the pool than they take
        Complete(running); // one more running than the cores: an overload
        Complete(running); // as many running as cores: the lag is not theirs to cure
        KeepUp();
        running.AddRange(await AcquireAsync(3));
        Complete(running); // the pool keeps up again
        time.Advance(ThreadPoolLag.Interval);
        time.Advance(TimeSpan.FromMilliseconds(20)); // the next probe waits: a second lag within the 10 s
        Complete(running);
        KeepUp();
        while (running.Count > 0)
        {
            Complete(running);
        }

        Assert.Equal(
            [ItemOutcome.Succeeded, ItemOutcome.Overloaded, ItemOutcome.Succeeded, ItemOutcome.Succeeded, ItemOutcome.Overloaded, .. Enumerable.Repeat(ItemOutcome.Succeeded, cores)],
            limit.Outcomes);
        Assert.Equal(["ThreadPoolLagging", "ThreadPoolKeepsUp"], logger.Events); // the second lag came within 10 s of the first warning
        Assert.Equal(0, limit.InFlight);

        async Task ServeAsync()
        {
            using var lease = await limiter.AcquireMarkingExceptionsAsync(new DefaultHttpContext(), default);
            Assert.True(lease.IsAcquired);
            time.Advance(TimeSpan.FromMilliseconds(5));
        }

        async Task<List<System.Threading.RateLimiting.RateLimitLease>> AcquireAsync(int count)
        {
            var leases = new List<System.Threading.RateLimiting.RateLimitLease>();
            for (var i = 0; i < count; i++)
            {
                leases.Add(await limiter.AcquireMarkingExceptionsAsync(new DefaultHttpContext(), default));
                Assert.True(leases[^1].IsAcquired);
            }

            return leases;
        }

        static void Complete(List<System.Threading.RateLimiting.RateLimitLease> leases)
        {
            leases[0].Dispose();
            leases.RemoveAt(0);
        }

        void KeepUp()
        {
            // The waiting probe runs, and the next runs as soon as it is queued: the lag reads 0.
            queued[^1].Execute();
            time.Advance(ThreadPoolLag.Interval);
            queued[^1].Execute();
        }
    }

    /// <summary>Records the names of the events logged to it.</summary>
    private sealed class ListLogger : Microsoft.Extensions.Logging.ILogger
    {
        private readonly List<string> _events = [];

        public IReadOnlyList<string> Events
        {
            get
            {
                lock (_events)
                {
                    return [.. _events];
                }
            }
        }

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(Microsoft.Extensions.Logging.LogLevel logLevel) => true;

        public void Log<TState>(Microsoft.Extensions.Logging.LogLevel logLevel, Microsoft.Extensions.Logging.EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            _ = formatter(state, exception); // the message must format
            lock (_events)
            {
                _events.Add(eventId.Name ?? "?");
            }
        }
    }
}
