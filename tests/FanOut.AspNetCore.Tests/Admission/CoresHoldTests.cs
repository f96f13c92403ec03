using FanOut.AspNetCore.Admission;

using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Time.Testing;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>The cores' hold: a pool that lags beyond a service time holds the admission at the cores, longer each time the lag comes back soon (probes a list stands in for; the fake clock moves, the pool does not).</summary>
public sealed class CoresHoldTests
{
    private const int Cores = 2;

    private static readonly TimeSpan Service = TimeSpan.FromMilliseconds(5);

    [Fact]
    public void Room_PoolLaggingBeyondAServiceTime_IsTheCoresUntilTheHoldLapses()
    {
        var pool = new HeldPool(Service);

        Assert.Equal(int.MaxValue, pool.Room());
        pool.Lag(TimeSpan.FromMilliseconds(20));
        Assert.Equal(Cores, pool.Room());

        var held = pool.KeepUpWhileHeld();

        Assert.Equal(CoresHold.ShortestHold.TotalMilliseconds, held.TotalMilliseconds, 10.0);
        Assert.Equal(int.MaxValue, pool.Room());
    }

    [Fact]
    public void Room_LagBackSoonAfterEachHold_DoublesTheNextUpToTheLongest()
    {
        var pool = new HeldPool(Service);
        var holds = new List<double>();
        for (var i = 0; i < 6; i++)
        {
            pool.Lag(TimeSpan.FromMilliseconds(20)); // back 10-20 ms after the last hold lapsed
            Assert.Equal(Cores, pool.Room());
            holds.Add(Math.Round(pool.KeepUpWhileHeld() / CoresHold.ShortestHold));
        }

        Assert.Equal([1, 2, 4, 8, 16, 16], holds);
        Assert.Equal(CoresHold.LongestHold, 16 * CoresHold.ShortestHold);
    }

    [Fact]
    public void Room_LagBackLongAfterAHold_HoldsTheShortestAgain()
    {
        var pool = new HeldPool(Service);
        pool.Lag(TimeSpan.FromMilliseconds(20));
        pool.Room();
        pool.KeepUpWhileHeld();
        pool.Lag(TimeSpan.FromMilliseconds(20));
        pool.Room();
        Assert.Equal(2.0, Math.Round(pool.KeepUpWhileHeld() / CoresHold.ShortestHold)); // back at once: twice as long

        pool.KeepUp(2 * CoresHold.ShortestHold + ThreadPoolLag.Interval); // longer than that hold after it lapsed
        pool.Lag(TimeSpan.FromMilliseconds(20));
        Assert.Equal(Cores, pool.Room());

        Assert.Equal(1.0, Math.Round(pool.KeepUpWhileHeld() / CoresHold.ShortestHold));
    }

    [Fact]
    public void Room_LagAboveHalfAServiceTime_KeepsAHoldButBeginsNone()
    {
        var pool = new HeldPool(TimeSpan.FromMilliseconds(8));
        pool.Lag(TimeSpan.FromMilliseconds(6)); // above half of 8 ms, within it: no hold begins
        Assert.Equal(int.MaxValue, pool.Room());

        pool.Lag(TimeSpan.FromMilliseconds(20));
        Assert.Equal(Cores, pool.Room());
        pool.KeepUp(CoresHold.ShortestHold - TimeSpan.FromMilliseconds(50));
        pool.Lag(TimeSpan.FromMilliseconds(6)); // within the hold, the same lag keeps it: at the cores the pool still lags a little
        Assert.Equal(Cores, pool.Room());

        Assert.True(pool.KeepUpWhileHeld() > CoresHold.ShortestHold - TimeSpan.FromMilliseconds(60));
    }

    [Fact]
    public void Room_LagWithinThePoolsNoise_NeverHolds()
    {
        var pool = new HeldPool(TimeSpan.FromMilliseconds(0.2)); // requests of 0.2 ms: a lag of 1.5 ms is beyond them, not beyond the noise
        pool.Lag(TimeSpan.FromMilliseconds(1.5));

        Assert.Equal(int.MaxValue, pool.Room());
        Assert.Null(pool.Hold.LagBeyondService);
    }

    [Fact]
    public void Room_NoServiceTimeYet_NeverHolds()
    {
        var pool = new HeldPool(service: null);
        pool.Lag(TimeSpan.FromMilliseconds(50));

        Assert.Equal(int.MaxValue, pool.Room());
    }

    [Fact]
    public async Task AdmitAsync_CoresHeld_QueuesBeyondThemAndAdmitsAsTheyFree()
    {
        var limit = ConcurrencyLimit.Fixed(Environment.ProcessorCount + 2);
        using var admission = await LaggingAsync(new FanOutConcurrencyOptions { Limit = limit, QueuePerPermit = 4, RejectionStart = 1, QueueTimeout = TimeSpan.FromMinutes(1) });

        await admission.AdmitAtOnceAsync(RequestPriority.Normal, Environment.ProcessorCount);
        var beyond = Enumerable.Range(0, 4 * Environment.ProcessorCount).Select(_ => admission.AdmitAsync(RequestPriority.Normal, default).AsTask()).ToArray();

        Assert.All(beyond, t => Assert.False(t.IsCompleted)); // permits of the limit are free, but not a core
        Assert.Equal(Environment.ProcessorCount, limit.InFlight);
        var full = admission.AdmitAsync(RequestPriority.Normal, default); // the queue is the cores': 4 per core, not 4 per permit of the limit
        Assert.True(full.IsCompleted, "the queue took a request beyond 4 per core");
        Assert.Equal(AdmissionStatus.Refused, await full);
        admission.Release();
        Assert.Equal(AdmissionStatus.Admitted, await beyond[0]); // one core freed: the queue's head takes it
        Assert.Equal(Environment.ProcessorCount, limit.InFlight);
        admission.Dispose();
        Assert.All(await Task.WhenAll(beyond[1..]), s => Assert.Equal(AdmissionStatus.Refused, s));
        admission.ReleaseAll(Environment.ProcessorCount);
    }

    [Fact]
    public async Task AdmitAsync_CoresHeld_KeepsOneWaitingPlacePerCore()
    {
        // The default QueuePerPermit (0.1) of 2 cores rounds up to one place; held at the cores, the limit's room above the
        // bottleneck is gone, so the queue keeps one request per core (a hand-tuned ConcurrencyLimiter's C + C).
        var cores = Environment.ProcessorCount;
        var limit = ConcurrencyLimit.Fixed(cores + 2);
        using var admission = await LaggingAsync(new FanOutConcurrencyOptions { Limit = limit, RejectionStart = 1, QueueTimeout = TimeSpan.FromMinutes(1) });

        await admission.AdmitAtOnceAsync(RequestPriority.Normal, cores);
        var waiting = Enumerable.Range(0, cores).Select(_ => admission.AdmitAsync(RequestPriority.Normal, default).AsTask()).ToArray();
        var full = admission.AdmitAsync(RequestPriority.Normal, default);

        Assert.All(waiting, t => Assert.False(t.IsCompleted));
        Assert.True(full.IsCompleted, "the queue took more than one request per core");
        Assert.Equal(AdmissionStatus.Refused, await full);
        admission.Dispose();
        Assert.All(await Task.WhenAll(waiting), s => Assert.Equal(AdmissionStatus.Refused, s));
        admission.ReleaseAll(cores);
    }

    [Fact]
    public async Task AdmitAsync_ThreadPoolLagUnwatched_AdmitsEveryPermitAtOnce()
    {
        var limit = ConcurrencyLimit.Fixed(Environment.ProcessorCount + 2);
        var probes = new List<IThreadPoolWorkItem>();
        using var admission = await LaggingAsync(new FanOutConcurrencyOptions { Limit = limit, WatchThreadPoolLag = false }, probes);

        await admission.AdmitAtOnceAsync(RequestPriority.Normal, Environment.ProcessorCount + 2);

        Assert.Empty(probes); // nothing probes the pool
        Assert.Null(admission.PoolLagBeyondService);
        admission.ReleaseAll(Environment.ProcessorCount + 2);
    }

    /// <summary>An admission on a fake clock that has served one request in <see cref="Service"/>, whose pool's probe then waited 20 ms (longer than requests take), the probes kept in <paramref name="probes"/>.</summary>
    private static async Task<RequestAdmission> LaggingAsync(FanOutConcurrencyOptions options, List<IThreadPoolWorkItem>? probes = null)
    {
        var time = new FakeTimeProvider();
        options.TimeProvider = time;
        var admission = new RequestAdmission(options, NullLogger.Instance, poolQueue: (probes ?? []).Add);
        await admission.AdmitAtOnceAsync(RequestPriority.Normal);
        admission.Release(Service);
        time.Advance(ThreadPoolLag.Interval);
        time.Advance(TimeSpan.FromMilliseconds(20));
        return admission;
    }

    /// <summary>A <see cref="CoresHold"/> of <see cref="Cores"/> over a pool whose probes run only when the test says.</summary>
    private sealed class HeldPool
    {
        private readonly FakeTimeProvider _time = new();
        private readonly List<IThreadPoolWorkItem> _probes = [];
        private int _ran;

        public HeldPool(TimeSpan? service)
        {
            var serviceTime = new ServiceTimeEstimate(_time);
            if (service is { } s)
            {
                serviceTime.Add(s);
            }

            Hold = new CoresHold(_time, new ThreadPoolLag(_time, _probes.Add), serviceTime, Cores);
        }

        public CoresHold Hold { get; }

        public int Room() => Hold.Room(_time.GetTimestamp());

        /// <summary>Lets the next probe wait <paramref name="wait"/> (one is queued at the next tick of the probes' timer).</summary>
        public void Lag(TimeSpan wait)
        {
            RunProbes();
            _time.Advance(ThreadPoolLag.Interval);
            _time.Advance(wait);
        }

        /// <summary>Runs every probe as soon as it is queued for <paramref name="span"/>.</summary>
        public void KeepUp(TimeSpan span)
        {
            for (var elapsed = TimeSpan.Zero; elapsed < span; elapsed += ThreadPoolLag.Interval)
            {
                RunProbes();
                _time.Advance(ThreadPoolLag.Interval);
            }

            RunProbes();
        }

        /// <summary>Keeps up, reading the room every tick, until the hold lapses; returns how long it lasted from now.</summary>
        public TimeSpan KeepUpWhileHeld()
        {
            var start = _time.GetUtcNow();
            RunProbes();
            while (Room() == Cores)
            {
                Assert.True(_time.GetUtcNow() - start < 2 * CoresHold.LongestHold, "the hold never lapsed");
                _time.Advance(ThreadPoolLag.Interval);
                RunProbes();
            }

            return _time.GetUtcNow() - start;
        }

        private void RunProbes()
        {
            while (_ran < _probes.Count)
            {
                _probes[_ran++].Execute();
            }
        }
    }
}
