using System.Diagnostics;
using System.Globalization;

using FanOut.Redis.Adaptive;
using FanOut.Redis.Diagnostics;
using FanOut.Redis.Infrastructure;
using FanOut.Redis.Leases;

using StackExchange.Redis;

namespace FanOut.Redis;

/// <summary>
/// A <see cref="ConcurrencyLimit"/> whose permits are leases in Redis: every process that creates one with the same
/// <see cref="RedisLimitOptions.Key"/> shares one <see cref="RedisLimitOptions.Budget"/>, so N workers calling FanOutAsync
/// against one downstream hold at most the budget between them.
/// </summary>
/// <remarks>
/// <para>A local front keeps the per-item cost off the network: a permit is taken without any round trip while this process
/// holds an idle lease. A worker that finds none waits while one background loop leases from Redis in batches of at most
/// <see cref="RedisLimitOptions.BatchSize"/>; a finished item's lease goes to the next local waiter, or stays idle here and
/// goes back to Redis once it sat unused for <see cref="RedisLimitOptions.Linger"/>. While other processes are left short,
/// a process holding more than its fair share (budget / active processes) hands each lease its items finish back to Redis.</para>
/// <para>Leases expire after <see cref="RedisLimitOptions.LeaseTime"/> by the Redis server's clock and are renewed every third
/// of it while held, so a crashed process's permits come back within one lease time and a long item keeps its permit.
/// Waiters are woken by a pub/sub message on every release, with a jittered poll as the safety net.</para>
/// <para>Every round trip is bounded by <see cref="RedisLimitOptions.RedisTimeout"/>; one not answered in time counts as
/// Redis unavailable (<see cref="RedisLimitOptions.WhenUnavailable"/> applies to the waiters), and no failure of any kind
/// ends a background loop.</para>
/// <para>Dispose it (<see cref="DisposeAsync"/>) after the fan-out calls that use it have finished: that stops its loops and
/// returns every lease.</para>
/// </remarks>
public sealed class RedisConcurrencyLimit : ConcurrencyLimit, IAsyncDisposable
{
    private const string RedisKind = "redis";

    private static readonly Task<bool> s_granted = Task.FromResult(true);
    private static readonly Task<bool> s_canceled = Task.FromResult(false);

    private readonly RedisLimitOptions _options;
    private readonly bool _ownsConnection;
    private readonly RedisLimitTelemetry _telemetry;
    private readonly LocalLeases _leases;
    private readonly LeaseClient _client;
    private readonly FleetState _fleet;
    private readonly ReleaseSubscription _subscription;
    private readonly UnavailableHandler _unavailable;
    private readonly LeaseAcquireLoop _acquire;
    private readonly LeaseRenewalLoop _renewal;
    private readonly LeaseReturnLoop _return;

    /// <summary>The adaptive budget's local half and its loop; null for a fixed budget.</summary>
    private readonly FleetBudgetController? _control;
    private readonly FleetBudgetLoop? _budgetLoop;
    private readonly CancellationTokenSource _stop = new();

    /// <summary>The handler on the connection's <c>ConnectionFailed</c>, kept to take it off at disposal.</summary>
    private readonly EventHandler<ConnectionFailedEventArgs> _onConnectionFailed;

    /// <summary>Guards <see cref="_loops"/>: the loops start once, and never after disposal began.</summary>
    private readonly Lock _lifecycle = new();

    /// <summary>The background loops (acquire, renewal, return, and the adaptive budget's), started by the first wait; awaited by <see cref="DisposeAsync"/>.</summary>
    private Task? _loops;

    /// <summary>Set (under <see cref="_lifecycle"/>) when disposal begins: no loop starts after it.</summary>
    private bool _stopping;

    private int _disposed;

    private RedisConcurrencyLimit(Task<IConnectionMultiplexer> redis, string endpoints, RedisLimitOptions options, bool ownsConnection)
        : base(TraitsOf(options))
    {
        _options = options;
        _ownsConnection = ownsConnection;
        var clientId = string.Create(CultureInfo.InvariantCulture, $"{Environment.ProcessId}-{Guid.NewGuid():N}");
        _telemetry = new RedisLimitTelemetry(options.Key);
        Name = $"redis:{options.Key}";
        var activity = new LoopActivity();
        var budgetWake = new WakeSignal(activity);
        var pause = options.Adaptive is null ? null : new FleetPause(options.TimeProvider, budgetWake);
        _leases = new LocalLeases(this, options.CeilingBudget, options.TimeProvider, _telemetry, pause, activity);
        _client = new LeaseClient(redis, endpoints, options, clientId);
        _fleet = options.Adaptive is { } bounds
            ? new FleetState(options.StartingBudget, options.TimeProvider, pause, _telemetry, bounds.MinBudget, bounds.MaxBudget, (long)bounds.MaxPause.TotalMilliseconds)
            : new FleetState(options.StartingBudget, options.TimeProvider, pause, _telemetry, options.Budget, options.Budget);
        _subscription = new ReleaseSubscription(_client, _leases, _fleet);
        _onConnectionFailed = OnConnectionFailed;
        _renewal = new LeaseRenewalLoop(options, _leases, _client, _fleet, _telemetry);
        _unavailable = new UnavailableHandler(options, _leases, _client, _fleet, _telemetry);
        _acquire = new LeaseAcquireLoop(options, _leases, _client, _fleet, _renewal, _unavailable);
        _return = new LeaseReturnLoop(options, _leases, _client, _fleet, _telemetry);
        if (options.Adaptive is { } adaptive)
        {
            _control = new FleetBudgetController(adaptive, options.TimeProvider, _leases, _fleet, budgetWake);
            _budgetLoop = new FleetBudgetLoop(options, _control, pause!, _client, _fleet, _leases);
        }
    }

    /// <summary>A limit sharing <paramref name="options"/>'s budget through <paramref name="redis"/>, which the caller keeps and disposes.</summary>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    public static RedisConcurrencyLimit Create(IConnectionMultiplexer redis, RedisLimitOptions options)
    {
        ArgumentNullException.ThrowIfNull(redis);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        return new RedisConcurrencyLimit(Task.FromResult(redis), LeaseClient.Describe(redis.GetEndPoints(configuredOnly: true)), options, ownsConnection: false);
    }

    /// <summary>Connects to Redis with <paramref name="configuration"/> (e.g. <c>127.0.0.1:6379</c>) and returns a limit that owns the connection.</summary>
    /// <remarks>
    /// Returns at once: the connection is made in the background (<c>AbortOnConnectFail</c> is turned off, so it keeps
    /// trying), and an acquisition waits for it at most <see cref="RedisLimitOptions.RedisTimeout"/>, after which
    /// <see cref="RedisLimitOptions.WhenUnavailable"/> applies.
    /// </remarks>
    /// <exception cref="ArgumentNullException">An argument is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of its documented range.</exception>
    /// <exception cref="ArgumentException"><paramref name="configuration"/> is not a StackExchange.Redis configuration string.</exception>
    public static Task<RedisConcurrencyLimit> ConnectAsync(string configuration, RedisLimitOptions options)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var settings = ConfigurationOptions.Parse(configuration);
        settings.AbortOnConnectFail = false;
        var connecting = ConnectAsync(settings);
        return Task.FromResult(new RedisConcurrencyLimit(connecting, LeaseClient.Describe(settings.EndPoints), options, ownsConnection: true));

        static async Task<IConnectionMultiplexer> ConnectAsync(ConfigurationOptions settings) =>
            await ConnectionMultiplexer.ConnectAsync(settings).ConfigureAwait(false);
    }

    /// <summary>The fleet-wide budget: the most permits all processes hold together (<see cref="RedisLimitOptions.Budget"/>, or the adaptive budget as Redis last said).</summary>
    public override int Current => _fleet.Budget;

    /// <summary>The highest the fleet budget has been, as this process saw it.</summary>
    public override int Peak => _fleet.Peak;

    /// <summary>The highest the fleet budget can be: <see cref="RedisLimitOptions.Budget"/>, or <see cref="AdaptiveBudgetOptions.MaxBudget"/>.</summary>
    public override int MaxCurrent => _options.CeilingBudget;

    /// <summary>The options' <see cref="RedisLimitOptions.TimeProvider"/>: item durations and overload retries use the limit's clock.</summary>
    public override TimeProvider TimeProvider => _options.TimeProvider;

    /// <summary>True while a retry-after hint pauses the fleet (adaptive budget only): no permit is handed out until it ends.</summary>
    public bool FleetPaused => _leases.IsPaused;

    /// <inheritdoc/>
    /// <value><c>redis</c>.</value>
    public override string Kind => RedisKind;

    /// <summary><c>redis:</c> and the key: the fleet's budget, as metrics and <c>fanout watch</c> show it.</summary>
    public override string? Name { get; }

    /// <summary>The options this limit was created with.</summary>
    public RedisLimitOptions Options => _options;

    /// <summary>Leases this process holds right now, busy and idle.</summary>
    public int LeasesHeld => _leases.HeldCount;

    /// <summary>Leases held here and not running an item.</summary>
    public int IdleLeases => _leases.Idle;

    /// <summary>Leases held fleet-wide, as Redis last reported it to this process.</summary>
    public int FleetInUse => _fleet.InUse;

    /// <summary>Scripts this limit has run in Redis (acquire, renew, release): its round trips, for measuring the cost per item.</summary>
    public long RoundTrips => _client.RoundTrips;

    /// <summary>
    /// Work this limit has started on its own so far: a background loop woken or started, a message of the key's channel
    /// handled. Constant while nothing happens; see <see cref="WhenSettledAsync"/>.
    /// </summary>
    public long BackgroundWakeups => _leases.Activity.Wakeups;

    /// <summary>
    /// Completes once this limit has nothing left to do on its own: every background loop waits for its clock or a signal
    /// (none woken and not yet run), no round trip to Redis is outstanding, and every message that the scripts of this
    /// process's limits published on the key's channel before the call has been handled (other processes' are not
    /// waited for: a fleet on a fake clock runs in one process). From then on nothing happens until its
    /// <see cref="RedisLimitOptions.TimeProvider"/> moves or a caller (a worker, another process's message) starts something.
    /// </summary>
    /// <remarks>
    /// <para>For a driver that runs limits on a fake clock (a simulation of a fleet): it moves the clock only once the
    /// limits have settled, so it waits for that event, never for the clock. Nothing here waits for a clock: a round trip
    /// Redis does not answer keeps the task pending (bound it with <paramref name="cancellationToken"/>).</para>
    /// <para>The messages are flushed by a marker this limit publishes on the channel and waits to handle (messages are
    /// handled in the order Redis sent them). Several limits sharing a key settle together with
    /// <see cref="WhenAllSettledAsync"/>.</para>
    /// </remarks>
    /// <param name="cancellationToken">Gives up the wait.</param>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public Task WhenSettledAsync(CancellationToken cancellationToken = default) => WhenAllSettledAsync([this], cancellationToken);

    /// <summary>
    /// Completes once every one of <paramref name="limits"/> (limits sharing a key in this process, as the processes of a
    /// fleet) has nothing left to do on its own, each as <see cref="WhenSettledAsync"/> says, and no
    /// message one of them caused is still on its way to another.
    /// </summary>
    /// <remarks>
    /// One pass waits until no loop of any limit is busy, then flushes each limit's messages (a marker each publishes and
    /// handles); the fleet has settled when the pass saw no limit wake and no script run between the two, since a script
    /// run meanwhile may publish a message that another limit handles after its own marker. Otherwise it passes again.
    /// </remarks>
    /// <param name="limits">The limits; the disposed ones and those never used are skipped.</param>
    /// <param name="cancellationToken">Gives up the wait.</param>
    /// <exception cref="ArgumentNullException"><paramref name="limits"/> is null.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public static async Task WhenAllSettledAsync(IReadOnlyCollection<RedisConcurrencyLimit> limits, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(limits);
        var running = limits.Where(l => l.IsRunning).ToArray();
        while (running.Length > 0)
        {
            await Task.WhenAll(running.Select(l => l._leases.Activity.WhenIdleAsync())).WaitAsync(cancellationToken).ConfigureAwait(false);
            var wakeups = running.Sum(l => l.BackgroundWakeups);
            var trips = running.Sum(l => l.RoundTrips);
            await Task.WhenAll(running.Select(l => l._subscription.FlushAsync(cancellationToken))).ConfigureAwait(false);
            if (running.Sum(l => l.BackgroundWakeups) == wakeups && running.Sum(l => l.RoundTrips) == trips && running.All(l => l._leases.Activity.Busy == 0))
            {
                return;
            }
        }
    }

    /// <summary>True once the loops started (the first wait), until disposal.</summary>
    private bool IsRunning => Volatile.Read(ref _loops) is not null && Volatile.Read(ref _disposed) == 0;

    /// <summary>
    /// Always shared across processes: the budget is the fleet's, and other processes cannot be seen waiting from here (a
    /// worker gives its lease back after every item, and <see cref="ReleaseCore"/> decides whether it stays idle here, goes
    /// to a local waiter or back to the fleet; a call waits for a lease rather than retiring a worker). An adaptive budget
    /// also learns from every item's outcome.
    /// </summary>
    private static LimitTraits TraitsOf(RedisLimitOptions options) =>
        LimitTraits.SharedAcrossProcesses | (options.Adaptive is null ? LimitTraits.None : LimitTraits.LearnsFromWork);

    /// <summary>An adaptive budget's overload test (<see cref="AdaptiveBudgetOptions.IsOverload"/>); false for a fixed budget.</summary>
    /// <param name="failure">What the item's body threw.</param>
    public override bool IsOverload(Exception failure) => _control?.IsOverload(failure) ?? false;

    /// <summary>Feeds one finished attempt to the adaptive budget (see <see cref="AdaptiveBudgetOptions"/>), without a retry-after.</summary>
    /// <param name="startTimestamp">When the attempt started.</param>
    /// <param name="outcome">How it ended.</param>
    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome) => OnItemCompleted(startTimestamp, outcome, retryAfter: null);

    /// <summary>
    /// Feeds one finished attempt to the adaptive budget; an overload's retry-after pauses the whole fleet (every process
    /// sharing the key) until that long from now by the Redis server's clock, at most <see cref="AdaptiveBudgetOptions.MaxPause"/>.
    /// </summary>
    /// <remarks>
    /// The one path of a hint to the fleet pause, whoever saw it: a fan-out call's completion (the hint it read from the
    /// failure), a <see cref="ConcurrencyLease.MarkOverloaded(TimeSpan)"/> (FanOut.Http's handler on a 429 or 503 with
    /// Retry-After), or a caller's own <see cref="ConcurrencyLimit.RecordCompletion(long, ItemOutcome, TimeSpan?)"/>.
    /// </remarks>
    /// <param name="startTimestamp">When the attempt started.</param>
    /// <param name="outcome">How it ended.</param>
    /// <param name="retryAfter">The downstream's retry-after, for an overloaded attempt; <see langword="null"/> when it gave none.</param>
    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome, TimeSpan? retryAfter) => _control?.OnCompleted(startTimestamp, outcome, retryAfter);

    /// <summary>Takes an idle lease held here; never touches the network. Fails while local workers wait, so they are served first.</summary>
    protected override bool TryAcquireCore() => _leases.WaiterCount == 0 && _leases.TryTakeIdle();

    /// <summary>Waits for a lease: from a finished local item, or from Redis through the acquire loop.</summary>
    /// <returns>False when <paramref name="cancellationToken"/> was canceled first.</returns>
    /// <exception cref="RedisLimitUnavailableException">Redis could not be reached and the policy is <see cref="RedisUnavailablePolicy.Fail"/> (the task faults).</exception>
    /// <exception cref="ObjectDisposedException">The limit was disposed.</exception>
    protected override Task<bool> WaitAsyncCore(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return s_canceled;
        }

        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        var waiter = new LeaseWaiter(this, _options.TimeProvider.GetTimestamp());
        if (!_leases.TryEnqueue(waiter))
        {
            return s_granted;
        }

        if (!TryStartLoops() && _leases.TryRemove(waiter))
        {
            // Disposal began after our check above and may have failed the waiters before this one was queued.
            throw new ObjectDisposedException(nameof(RedisConcurrencyLimit));
        }

        waiter.Register(cancellationToken);
        _leases.PumpWake.Set();
        return waiter.Task;
    }

    /// <summary>
    /// Gives a permit back: to a local waiter, to the idle stock, or to Redis when this process holds more than its fair
    /// share (budget / processes, rounded up) while others wait, or more than the floor share (rounded down) while another
    /// process starves (see <see cref="Leases.LeaseScripts.Acquire"/>).
    /// </summary>
    protected override void ReleaseCore()
    {
        base.ReleaseCore();
        if (_leases.TryEndUnbacked())
        {
            // A permit without a lease ends here; the room it frees is fallback room, which only the acquire loop hands out.
            if (_leases.WaiterCount != 0)
            {
                _leases.PumpWake.Set();
            }

            return;
        }

        if (_control?.TryPark() == true)
        {
            return; // sits out a window here after an overload (the budget loop stocks it then)
        }

        var held = _leases.HeldCount;
        if (_control?.TryShed() == true || (_fleet.OthersWaiting && held > _fleet.FairShare) || (_fleet.OthersStarving && held > _fleet.FloorShare))
        {
            _leases.TryHandBackOne();
            return;
        }

        _leases.Stock();
    }

    /// <summary>The permits this process would hold on the fallback if Redis were unreachable now (for tests and diagnostics).</summary>
    internal int FallbackLimitNow => _unavailable.FallbackLimit;

    /// <summary>Removes a waiter whose token was canceled before it got a permit.</summary>
    internal bool TryRemove(LeaseWaiter waiter) => _leases.TryRemove(waiter);

    /// <summary>Counts a permit in <see cref="ConcurrencyLimit.InFlight"/> (the budget is the ceiling): the local leases' half of a grant.</summary>
    internal bool CountPermit() => base.TryAcquireCore();

    /// <summary>Stops the loops, fails any waiter with <see cref="ObjectDisposedException"/>, returns every lease to Redis and leaves the fleet.</summary>
    /// <remarks>
    /// Never throws, and returns within about <see cref="RedisLimitOptions.RedisTimeout"/> even when Redis is gone: the release,
    /// the leave and the unsubscribe run together, each bounded by it. A lease that could not be returned expires within
    /// <see cref="RedisLimitOptions.LeaseTime"/>.
    /// </remarks>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        Task? loops;
        lock (_lifecycle)
        {
            AssertInvariants();
            _stopping = true;
            loops = _loops;
        }

        // Outside the lock: canceling runs the loops' continuations, possibly on this thread.
        await _stop.CancelAsync().ConfigureAwait(false);

        if (loops is not null)
        {
            // The loops never fault (BackgroundLoop) and every wait in them observes the stop token.
            await loops.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        if (_client.ConnectionIfReady is { } watched)
        {
            watched.ConnectionFailed -= _onConnectionFailed;
        }

        _leases.FailWaiters(new ObjectDisposedException(nameof(RedisConcurrencyLimit)));
        var ids = _leases.TakeAll(out var held);
        _telemetry.LeasesHeld(-held);
        if (loops is not null || ids.Length > 0)
        {
            await Task.WhenAll(Quietly(ReleaseAsync(ids)), Quietly(LeaveAsync()), Quietly(_subscription.UnsubscribeAsync(CancellationToken.None))).ConfigureAwait(false);
        }

        await CloseOwnedConnectionAsync().ConfigureAwait(false);
        _stop.Dispose();
    }

    private bool TryStartLoops()
    {
        lock (_lifecycle)
        {
            AssertInvariants();
            if (_stopping)
            {
                return false;
            }

            if (_loops is null)
            {
                var token = _stop.Token;
                _subscription.Start();
                WatchConnection();
                _loops = Task.WhenAll(_acquire.RunAsync(token), _renewal.RunAsync(token), _return.RunAsync(token), _budgetLoop?.RunAsync(token) ?? Task.CompletedTask);
            }

            return true;
        }
    }

    /// <summary>Tells the local leases when the connection fails (Redis may have lost them), once it is connected.</summary>
    private void WatchConnection()
    {
        var connecting = _client.ConnectionAsync();
        if (connecting.IsCompletedSuccessfully)
        {
            connecting.Result.ConnectionFailed += _onConnectionFailed;
        }
        else
        {
            _ = connecting.ContinueWith(
                static (task, state) =>
                {
                    var limit = (RedisConcurrencyLimit)state!;
                    task.Result.ConnectionFailed += limit._onConnectionFailed;
                },
                this,
                CancellationToken.None,
                TaskContinuationOptions.OnlyOnRanToCompletion | TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
        }
    }

    private void OnConnectionFailed(object? sender, ConnectionFailedEventArgs e)
    {
        if (e.ConnectionType == ConnectionType.Interactive)
        {
            _leases.Unverify();
        }
    }

    private async Task ReleaseAsync(string[] ids)
    {
        if (ids.Length > 0)
        {
            var store = await _client.Bounded(_client.StoreAsync(), CancellationToken.None).ConfigureAwait(false);
            _fleet.Observe(await _client.Bounded(store.ReleaseAsync(ids), CancellationToken.None).ConfigureAwait(false));
        }
    }

    private async Task LeaveAsync()
    {
        var store = await _client.Bounded(_client.StoreAsync(), CancellationToken.None).ConfigureAwait(false);
        await _client.Bounded(store.LeaveAsync(), CancellationToken.None).ConfigureAwait(false);
    }

    private async Task CloseOwnedConnectionAsync()
    {
        if (!_ownsConnection)
        {
            return;
        }

        var connecting = _client.ConnectionAsync();
        if (!connecting.IsCompleted)
        {
            // Still connecting (Redis down since the start): close it whenever the attempt ends, without waiting for it here.
            _ = connecting.ContinueWith(static t => t.Result.Dispose(), CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
            return;
        }

        if (connecting.IsCompletedSuccessfully)
        {
            var connection = connecting.Result;
            await Quietly(_client.Bounded(connection.CloseAsync(allowCommandsToComplete: false), CancellationToken.None)).ConfigureAwait(false);
            connection.Dispose();
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lifecycle.IsHeldByCurrentThread);

        // Disposal begins (the flag) before it stops anything: while not stopping, the loops, if started, still run.
        Debug.Assert(_stopping || !_stop.IsCancellationRequested);
        Debug.Assert(!_stopping || Volatile.Read(ref _disposed) != 0);
    }

    /// <summary>Awaits <paramref name="task"/>, swallowing its failure: disposal goes on whatever Redis does.</summary>
    private static async Task Quietly(Task task)
    {
        try
        {
            await task.ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Unreachable or slow: leases not returned expire within one lease time; the fleet forgets us within one too.
        }
    }
}
