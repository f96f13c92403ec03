using FanOut.Limits.Contract;

namespace FanOut.Tests.Limits.Contract;

/// <summary>
/// A limit written outside FanOut, against its public extension points only (as a user would: permits from a
/// <see cref="SemaphoreSlim"/>, which queues async waiters in order), passes the same contract as the built-in ones.
/// </summary>
public sealed class UserWrittenLimitContractTests : ConcurrencyLimitContract
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) => new(new SemaphoreLimit(capacity));

    [Theory]
    [InlineData(LimitTraits.None, 0)]
    [InlineData(LimitTraits.LearnsFromWork, 20)]
    public async Task FanOutAsync_ReportsEveryAttempt_OnlyWhenTheLimitLearnsFromWork(LimitTraits traits, int reported)
    {
        var limit = new SemaphoreLimit(2, traits);
        Assert.Equal(traits, limit.Traits);
        await Enumerable.Range(0, 20).FanOutAsync((i, ct) => ValueTask.CompletedTask, new FanOutOptions { Limit = limit });
        Assert.Equal(reported, limit.Completions);
    }

    [Fact]
    public async Task FanOutAsync_ReportsEveryAttempt_WhenTheLimitOverridesTheObsoleteWantsSamples()
    {
        // Source compatibility: a limit written before LimitTraits still compiles (with a warning) and still learns.
        var limit = new OlderLearningLimit(2);
        await Enumerable.Range(0, 20).FanOutAsync((i, ct) => ValueTask.CompletedTask, new FanOutOptions { Limit = limit });
        Assert.Equal(20, limit.Completions);
    }

    [Fact]
    public void Constructor_UnknownTraitBits_ThrowsNamingTheValueAndTheValidOnes()
    {
        var e = Assert.Throws<ArgumentOutOfRangeException>(() => new SemaphoreLimit(2, (LimitTraits)8));
        Assert.Equal("traits", e.ParamName);
        Assert.Contains("LearnsFromWork, RisesUnprompted, SharedAcrossProcesses", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task SharedAcrossProcesses_AnotherTakerOfThePermitsGetsOneBetweenTheLoopsItems(bool saysShared)
    {
        // Another process takes the semaphore's permit directly (never through WaitAsync, so the run cannot see it wait).
        // Said shared, the loop gives its permit back after item 0 and the other taker runs before item 1; unsaid, the
        // loop keeps its permit for every item (the right thing for a limit only this process uses).
        var limit = new SemaphoreLimit(1, saysShared ? LimitTraits.SharedAcrossProcesses : LimitTraits.None);
        Task? elsewhere = null;
        var elsewhereFirst = false;
        await Enumerable.Range(0, 3).FanOutAsync(
            (i, ct) =>
            {
                if (i == 0)
                {
                    elsewhere = limit.TakeElsewhereAsync();
                }
                else if (i == 1)
                {
                    elsewhereFirst = limit.TakenElsewhere;
                }

                return ValueTask.CompletedTask;
            },
            new FanOutOptions { Limit = limit });

        await elsewhere!.WaitAsync(TimeSpan.FromSeconds(20));
        Assert.Equal(saysShared, elsewhereFirst);
    }

    [Fact]
    public async Task RisesUnprompted_RoomThatComesWithNothingCompleting_IsTakenAtOnce()
    {
        // Item 0 waits until item 1 runs beside it; only a rise of the limit from outside makes room for item 1. A limit
        // that says it may rise unprompted has a worker of the call waiting for that room.
        var limit = new RaisedLimit(1, LimitTraits.RisesUnprompted);
        var secondStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var firstRunning = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var run = Enumerable.Range(0, 2).FanOutAsync(
            async (i, ct) =>
            {
                if (i == 0)
                {
                    firstRunning.TrySetResult();
                    await secondStarted.Task.WaitAsync(TimeSpan.FromSeconds(20), ct);
                }
                else
                {
                    secondStarted.TrySetResult();
                }
            },
            new FanOutOptions { Limit = limit });

        await firstRunning.Task.WaitAsync(TimeSpan.FromSeconds(20));
        limit.Raise(2);
        await run.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.True(secondStarted.Task.IsCompleted);
    }

    /// <summary>A limit whose room is a number set from outside (the docs' "room is a number" shape).</summary>
    private sealed class RaisedLimit(int start, LimitTraits traits) : ConcurrencyLimit(traits)
    {
        private int _current = start;

        public override int Current => Volatile.Read(ref _current);

        public override int MaxCurrent => int.MaxValue;

        public override string Kind => "raised";

        public void Raise(int to)
        {
            Volatile.Write(ref _current, to);
            OnCurrentChanged();
        }
    }

    /// <summary>A learning limit as written before <see cref="LimitTraits"/>: it overrides <c>WantsSamples</c>.</summary>
    private sealed class OlderLearningLimit(int capacity) : ConcurrencyLimit
    {
        private int _completions;

        public override int Current => capacity;

        public override string Kind => "older";

        public int Completions => Volatile.Read(ref _completions);

#pragma warning disable CS0618, CS0672 // the obsolete member this test keeps working
        protected override bool WantsSamples => true;
#pragma warning restore CS0618, CS0672

        protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome) => Interlocked.Increment(ref _completions);
    }

    /// <summary>The whole of a user's limit: the three Core methods, InFlight, and (optionally) the learning hooks.</summary>
    private sealed class SemaphoreLimit(int capacity, LimitTraits traits = LimitTraits.None) : ConcurrencyLimit(traits)
    {
        private readonly SemaphoreSlim _permits = new(capacity, capacity);
        private int _completions;
        private bool _takenElsewhere;

        public override int Current => capacity;

        public override string Kind => "semaphore";

        public override int InFlight => capacity - _permits.CurrentCount;

        public int Completions => Volatile.Read(ref _completions);

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

        /// <summary>True once <see cref="TakeElsewhereAsync"/> held the permit (set before it gives the permit back).</summary>
        public bool TakenElsewhere => Volatile.Read(ref _takenElsewhere);

        /// <summary>Another process: takes a permit straight from the semaphore, notes it, and gives it back.</summary>
        public async Task TakeElsewhereAsync()
        {
            await _permits.WaitAsync().ConfigureAwait(false);
            Volatile.Write(ref _takenElsewhere, true);
            _permits.Release();
        }
    }
}
