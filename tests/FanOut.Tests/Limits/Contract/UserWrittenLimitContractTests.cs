using FanOut.Limits.Contract;

namespace FanOut.Tests.Limits.Contract;

/// <summary>
/// A limit written outside FanOut, against its public extension points only (as a user would: permits from a
/// <see cref="SemaphoreSlim"/>, which queues async waiters in order), passes the same contract as the built-in ones.
/// </summary>
public sealed class UserWrittenLimitContractTests : ConcurrencyLimitContract
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) => new(new SemaphoreLimit(capacity));

    [Fact]
    public async Task FanOutAsync_LearnsNothing_WhenTheLimitWantsNoSamples()
    {
        var limit = new SemaphoreLimit(2);
        await Enumerable.Range(0, 20).FanOutAsync((i, ct) => ValueTask.CompletedTask, new FanOutOptions { Limit = limit });
        Assert.Equal(0, limit.Completions);
    }

    [Fact]
    public async Task FanOutAsync_ReportsEveryAttempt_WhenTheLimitWantsSamples()
    {
        var limit = new SemaphoreLimit(2, wantsSamples: true);
        await Enumerable.Range(0, 20).FanOutAsync((i, ct) => ValueTask.CompletedTask, new FanOutOptions { Limit = limit });
        Assert.Equal(20, limit.Completions);
    }

    /// <summary>The whole of a user's limit: the three Core methods, InFlight, and (optionally) the learning hooks.</summary>
    private sealed class SemaphoreLimit(int capacity, bool wantsSamples = false) : ConcurrencyLimit
    {
        private readonly SemaphoreSlim _permits = new(capacity, capacity);
        private int _completions;

        public override int Current => capacity;

        public override string Kind => "semaphore";

        public override int InFlight => capacity - _permits.CurrentCount;

        public int Completions => Volatile.Read(ref _completions);

        // "protected internal" only because this test assembly sees FanOut's internals; outside it, "protected override".
        protected internal override bool WantsSamples => wantsSamples;

        protected override bool TryAcquireCore() => _permits.Wait(0);

        protected override async Task<bool> WaitAsyncCore(CancellationToken cancellationToken)
        {
            try
            {
                await _permits.WaitAsync(cancellationToken).ConfigureAwait(false);
                return true;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return false;
            }
        }

        protected override void ReleaseCore() => _permits.Release();

        protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome) => Interlocked.Increment(ref _completions);
    }
}
