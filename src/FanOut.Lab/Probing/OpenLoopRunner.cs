using System.Globalization;
using System.Threading.Channels;

using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Probing;

/// <summary>Runs the open-loop check: arrivals at a constant rate, at most <c>limit</c> in flight, each timed from its intended start.</summary>
/// <remarks>One scheduler writes each arrival's intended timestamp into a channel when it is due (computed from the start,
/// never from the previous send, so a late timer does not move later arrivals); <c>limit</c> workers read it, one async
/// loop each. Timer slack only delays sends, and that delay is counted in the corrected latency, as it would be for a
/// real caller.</remarks>
internal sealed class OpenLoopRunner(ProbeTarget target, RequestBudget budget, TimeProvider time)
{
    /// <summary>Offers <paramref name="perSecond"/> arrivals per second for <paramref name="length"/> (at most
    /// <paramref name="maxArrivals"/>) through <paramref name="limit"/> slots.</summary>
    public async Task<OpenLoopResult> RunAsync(double perSecond, int limit, TimeSpan length, int maxArrivals, double? closedLoopP99Ms, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(perSecond, 0);
        var total = (int)Math.Clamp(Math.Floor(perSecond * length.TotalSeconds), 1, maxArrivals);
        using var client = target.CreateClient(limit);
        var channel = Channel.CreateUnbounded<long>(new UnboundedChannelOptions { SingleWriter = true });
        var recorders = Enumerable.Range(0, limit).Select(_ => new Recorder()).ToArray();
        long started = 0;
        var start = time.GetTimestamp();
        var workers = recorders.Select(r => Task.Run(() => WorkAsync(client, channel.Reader, r, () => Interlocked.Increment(ref started), cancellationToken), CancellationToken.None)).ToArray();
        long scheduled = 0;
        long backlog = 0;
        var lateMs = 0.0;
        var backlogs = new List<long>(total);
        try
        {
            for (var i = 0; i < total && !cancellationToken.IsCancellationRequested; i++)
            {
                var offset = TimeSpan.FromSeconds(i / perSecond);
                var wait = offset - time.GetElapsedTime(start);
                if (wait > TimeSpan.FromMilliseconds(1))
                {
                    await Task.Delay(wait, time, cancellationToken).ConfigureAwait(false);
                }

                lateMs = Math.Max(lateMs, (time.GetElapsedTime(start) - offset).TotalMilliseconds);
                backlogs.Add(scheduled - Interlocked.Read(ref started));
                channel.Writer.TryWrite(start + (long)(offset.TotalSeconds * time.TimestampFrequency));
                scheduled++;
            }
        }
        catch (OperationCanceledException)
        {
        }

        backlog = scheduled - Interlocked.Read(ref started);
        channel.Writer.Complete();
        await Task.WhenAll(workers).ConfigureAwait(false);
        var seconds = time.GetElapsedTime(start).TotalSeconds;
        var corrected = recorders.SelectMany(r => r.Corrected).Order().ToArray();
        var service = recorders.SelectMany(r => r.Service).Order().ToArray();
        var failures = new SortedDictionary<string, long>(StringComparer.Ordinal);
        foreach (var (kind, count) in recorders.SelectMany(r => r.Failures))
        {
            failures[kind] = (failures.TryGetValue(kind, out var sum) ? sum : 0) + count;
        }

        var sent = recorders.Sum(r => r.Sent);
        var ok = recorders.Sum(r => r.Ok);
        var failed = failures.Values.Sum();
        var (early, late) = Thirds(backlogs);
        var grew = QueueGrew(early, late, limit);
        var holds = !grew && failed == 0 && sent == total && ok == total;
        var verdict = holds
            ? $"held: {N(total)} arrivals at {ProbeText.Rate(perSecond)}/s, none rejected, {N(backlog)} waiting at the end"
            : sent < total ? $"cut short: {N(sent)} of {N(total)} arrivals sent ({(cancellationToken.IsCancellationRequested ? "interrupted" : "--max-requests spent")})"
            : failed > 0 ? $"{N(failed)} of {N(sent)} arrivals at {ProbeText.Rate(perSecond)}/s failed ({string.Join(", ", failures.Select(f => $"{f.Value.ToString("N0", CultureInfo.InvariantCulture)} {f.Key}"))})"
            : $"the queue grew: on average {early.ToString("0.#", CultureInfo.InvariantCulture)} arrivals waited for one of {N(limit)} slots in the first third and {late.ToString("0.#", CultureInfo.InvariantCulture)} in the last";
        if (!holds && FellBehind(lateMs))
        {
            verdict += $"; the client's own schedule ran up to {lateMs.ToString("N0", CultureInfo.InvariantCulture)} ms late (a busy client machine sends its arrivals in bursts)";
        }
        return new OpenLoopResult(
            perSecond,
            limit,
            total,
            sent,
            ok,
            failures,
            ItemOutcomes.Percentile(corrected, 0.50),
            ItemOutcomes.Percentile(corrected, 0.99),
            ItemOutcomes.Percentile(service, 0.50),
            ItemOutcomes.Percentile(service, 0.99),
            closedLoopP99Ms,
            early,
            late,
            backlog,
            seconds,
            lateMs,
            holds,
            verdict);
    }

    private async Task WorkAsync(HttpClient client, ChannelReader<long> arrivals, Recorder recorder, Action started, CancellationToken cancellationToken)
    {
        try
        {
            await foreach (var intended in arrivals.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                started();
                if (!await budget.TakeAsync(cancellationToken).ConfigureAwait(false))
                {
                    return;
                }

                var sent = time.GetTimestamp();
                var outcome = await SendOutcome.SendAsync(target, client, cancellationToken).ConfigureAwait(false);
                if (outcome.Interrupted)
                {
                    return;
                }

                var answered = time.GetTimestamp();
                recorder.Sent++;
                if (outcome.Ok)
                {
                    recorder.Ok++;
                    // From the intended start, or from the send when the scheduler released it early (it does not wait
                    // under a millisecond): a call's corrected latency is never below its service time.
                    recorder.Corrected.Add(time.GetElapsedTime(Math.Min(intended, sent), answered).TotalMilliseconds);
                    recorder.Service.Add(time.GetElapsedTime(sent, answered).TotalMilliseconds);
                }
                else
                {
                    var kind = outcome.FailureKind!;
                    recorder.Failures[kind] = (recorder.Failures.TryGetValue(kind, out var count) ? count : 0) + 1;
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    /// <summary>True when the scheduler released an arrival more than <see cref="LateScheduleMs"/> after it was due: the
    /// arrivals then went in a burst the schedule never asked for, so a rejection or a queue may be the client's own.</summary>
    internal static bool FellBehind(double scheduleLateMs) => scheduleLateMs > LateScheduleMs;

    /// <summary>Ten times a quiet host's p99 timer lateness (7 ms): later than that, the client machine was busy.</summary>
    private const double LateScheduleMs = 70;

    /// <summary>True when the backlog grew from the first third of the arrivals to the last by more than
    /// max(2, a quarter of the limit): a stable queue (arrivals under capacity) only fluctuates about a level, an
    /// overloaded one grows all the time.</summary>
    internal static bool QueueGrew(double early, double late, int limit) => late - early > Math.Max(2, 0.25 * limit);

    /// <summary>The mean of the first and of the last third of <paramref name="samples"/>.</summary>
    internal static (double Early, double Late) Thirds(IReadOnlyList<long> samples)
    {
        if (samples.Count < 3)
        {
            return (0, 0);
        }

        var third = samples.Count / 3;
        return (samples.Take(third).Average(), samples.Skip(samples.Count - third).Average());
    }

    private static string N(long value) => value.ToString("N0", CultureInfo.InvariantCulture);

    /// <summary>One worker's record; each worker owns one, so recording takes no lock.</summary>
    private sealed class Recorder
    {
        public List<double> Corrected { get; } = [];

        public List<double> Service { get; } = [];

        public Dictionary<string, long> Failures { get; } = [];

        public long Sent { get; set; }

        public long Ok { get; set; }
    }
}
