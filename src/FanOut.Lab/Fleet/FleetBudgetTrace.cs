using System.Diagnostics;
using System.Globalization;

using FanOut.Downstream;

using StackExchange.Redis;

namespace FanOut.Lab.Fleet;

/// <summary>
/// Samples an adaptive fleet's budget (from Redis) beside the downstream's capacity and 429 count every 10 ms while a
/// fleet runs, halves the capacity once half the items were served when asked to, and reads convergence off the samples.
/// </summary>
/// <remarks>
/// Converged means: from that sample to the end of the run, the budget stays within a band of the capacity in effect
/// (<see cref="BandLow"/> to <see cref="BandHigh"/> times it). For a run whose capacity changed, the time is counted
/// from the change. With the environment variable <c>FANOUT_FLEET_TRACE</c> set to a file path, the samples are appended
/// there as CSV (ms, budget, capacity, 429s, served), the data behind docs/redis-limit.md's plot.
/// </remarks>
internal sealed class FleetBudgetTrace : IAsyncDisposable
{
    /// <summary>The band's floor, times the capacity.</summary>
    public const double BandLow = 0.75;

    /// <summary>The band's ceiling, times the capacity.</summary>
    public const double BandHigh = 1.25;

    private static readonly TimeSpan s_every = TimeSpan.FromMilliseconds(10);

    private readonly List<Sample> _samples = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;
    private double? _changedAtMs;

    private FleetBudgetTrace(ConnectionMultiplexer redis, string key, DownstreamServer server, int items, bool halveCapacity)
    {
        _sampling = SampleAsync(redis, key, server, items, halveCapacity, _stop.Token);
    }

    private readonly record struct Sample(double Ms, int Budget, int Capacity, long Rejected, long Served);

    /// <summary>Starts sampling <paramref name="key"/>'s budget.</summary>
    public static async Task<FleetBudgetTrace> StartAsync(string redisEndpoint, string key, DownstreamServer server, int items, bool halveCapacity)
    {
        var redis = await ConnectionMultiplexer.ConnectAsync(redisEndpoint).ConfigureAwait(false);
        return new FleetBudgetTrace(redis, key, server, items, halveCapacity);
    }

    /// <summary>Stops sampling and reads the run: convergence and the budget's range and 429s after it.</summary>
    public async Task<FleetTraceSummary> StopAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _sampling.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        Write();
        var from = _changedAtMs ?? 0;
        var after = _samples.Where(s => s.Ms >= from && s.Budget > 0).ToList();
        var converged = after.Count;
        for (var i = after.Count - 1; i >= 0; i--)
        {
            var s = after[i];
            if (s.Budget < BandLow * s.Capacity || s.Budget > BandHigh * s.Capacity)
            {
                break;
            }

            converged = i;
        }

        if (converged >= after.Count)
        {
            return new FleetTraceSummary(null, null, null, null, null);
        }

        var settled = after.Skip(converged).ToList();
        var last = _samples[^1];
        return new FleetTraceSummary(
            settled[0].Ms - from,
            settled.Min(s => s.Budget),
            settled.Max(s => s.Budget),
            last.Rejected - settled[0].Rejected,
            last.Served - settled[0].Served + (last.Rejected - settled[0].Rejected));
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync().ConfigureAwait(false);
        await _sampling.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _stop.Dispose();
    }

    private async Task SampleAsync(ConnectionMultiplexer redis, string key, DownstreamServer server, int items, bool halveCapacity, CancellationToken stop)
    {
        await using var _ = redis.ConfigureAwait(false);
        var database = redis.GetDatabase();
        var budgetKey = (RedisKey)$"fanout:{{{key}}}:budget";
        var started = Stopwatch.GetTimestamp();
        using var timer = new PeriodicTimer(s_every);
        try
        {
            do
            {
                var ms = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
                var stats = server.GetStats();
                if (halveCapacity && _changedAtMs is null && stats.RequestsServed >= items / 2)
                {
                    server.SetCapacity(server.Options.Capacity / 2);
                    _changedAtMs = ms;
                }

                var budget = (int?)await database.HashGetAsync(budgetKey, "b").ConfigureAwait(false) ?? 0;
                _samples.Add(new Sample(ms, budget, server.CurrentCapacity, stats.Rejected429, stats.RequestsServed));
            }
            while (await timer.WaitForNextTickAsync(stop).ConfigureAwait(false));
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
        }
    }

    private void Write()
    {
        if (Environment.GetEnvironmentVariable("FANOUT_FLEET_TRACE") is not { Length: > 0 } path)
        {
            return;
        }

        File.AppendAllLines(path, [$"# run {DateTime.UtcNow:O}{(_changedAtMs is { } at ? $", capacity halved at {at:0} ms" : string.Empty)}"]);
        File.AppendAllLines(path, _samples.Select(s => string.Create(CultureInfo.InvariantCulture, $"{s.Ms:0},{s.Budget},{s.Capacity},{s.Rejected},{s.Served}")));
    }
}

/// <summary>An adaptive fleet's run, read off its budget samples; nulls when the budget never settled within the band.</summary>
/// <param name="ConvergenceMs">From the start (or the capacity change) to the sample from which the budget stayed in the band.</param>
/// <param name="BudgetLow">The lowest budget after convergence.</param>
/// <param name="BudgetHigh">The highest budget after convergence.</param>
/// <param name="Rejected429">The server's 429s after convergence.</param>
/// <param name="Calls">The calls the server answered after convergence (served + 429).</param>
internal sealed record FleetTraceSummary(double? ConvergenceMs, int? BudgetLow, int? BudgetHigh, long? Rejected429, long? Calls);

/// <summary>The band around the capacity an adaptive fleet's budget must stay in to count as converged.</summary>
public static class FleetBudgetBand
{
    /// <summary>The band's floor, times the capacity.</summary>
    public const double Low = FleetBudgetTrace.BandLow;

    /// <summary>The band's ceiling, times the capacity.</summary>
    public const double High = FleetBudgetTrace.BandHigh;
}
