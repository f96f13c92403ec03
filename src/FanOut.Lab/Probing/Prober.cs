using System.Globalization;
using System.Net;
using System.Net.Sockets;

using FanOut.Lab.Results;

namespace FanOut.Lab.Probing;

/// <summary>Runs <c>fanout probe</c>: checks the target answers, steps the concurrency up until the level-stopping rule
/// says stop, checks whether rejections follow the rate, searches the exact capacity between the last level within it and
/// the first beyond it, confirms the limit under open-loop load, fits the USL and recommends a limit.</summary>
/// <remarks>Cancelling the token (Ctrl+C, SIGTERM) stops sending at once; the report then holds the levels measured so
/// far. <see cref="ProbeSettings.Duration"/> and <see cref="ProbeSettings.MaxRequests"/> end it the same way.</remarks>
public sealed class Prober
{
    /// <summary>A level ends at most at this share of the request budget (once it has its minimum answers), so a fast
    /// endpoint's first levels do not spend it all.</summary>
    private const int LevelBudgetShare = 20;

    /// <summary>The open-loop check offers this share of the throughput found at the recommended limit.</summary>
    private const double OpenLoopShare = 0.9;

    /// <summary>Requests sent one by one after the reachability check and not measured: they pay the cold start (JIT,
    /// connection set-up, the server's own first-request costs) that would otherwise land in level 1.</summary>
    private const int WarmUpRequests = 4;

    private readonly ProbeSettings _settings;
    private readonly IProbeProgress _progress;
    private readonly TimeProvider _time;
    private readonly ProbeTarget _target;
    private readonly RequestBudget _budget;
    private readonly LevelRunner _runner;
    private readonly OverloadRule _rule;
    private readonly OpenLoopRunner _openLoop;
    private TimeSpan _reachableLatency;

    /// <summary>A probe of <paramref name="settings"/>, reporting to <paramref name="progress"/>.</summary>
    public Prober(ProbeSettings settings, IProbeProgress progress, TimeProvider time)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(progress);
        ArgumentNullException.ThrowIfNull(time);
        ArgumentOutOfRangeException.ThrowIfLessThan(settings.MaxConcurrency, 1);
        _settings = settings;
        _progress = progress;
        _time = time;
        _target = new ProbeTarget(settings);
        _budget = new RequestBudget(settings.MaxRequests, settings.MaxRatePerSecond, time);
        _runner = new LevelRunner(_target, _budget, time);
        _openLoop = new OpenLoopRunner(_target, _budget, time);
        _rule = new OverloadRule(settings.SloP99Ms);
    }

    /// <summary>Probes the target.</summary>
    /// <exception cref="UnreachableTargetException">The first request got no usable answer; nothing was measured.</exception>
    /// <exception cref="OperationCanceledException">Cancelled before the first request was answered.</exception>
    public async Task<ProbeReport> RunAsync(CancellationToken cancellationToken)
    {
        var start = _time.GetTimestamp();
        using var deadline = _settings.Duration is { } duration ? new CancellationTokenSource(duration, _time) : new CancellationTokenSource();
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, deadline.Token);
        await CheckReachableAsync(deadline.Token, stop.Token).ConfigureAwait(false);
        _progress.Note(ProbeEstimate.For(_settings, _reachableLatency).Text);
        await WarmUpAsync(stop.Token).ConfigureAwait(false);

        var levels = new List<LevelResult>();
        var verdicts = new List<LevelVerdict>();
        var endedBy = await RampAsync(levels, verdicts, deadline.Token, stop.Token).ConfigureAwait(false);
        var rate = RateVerdict.None;
        if (endedBy == LevelEnd.Measured)
        {
            rate = await CheckRateAsync(levels, stop.Token).ConfigureAwait(false);
        }

        CapacityFinding? capacity = null;
        Recommendation recommendation;
        if (rate.IsRate)
        {
            // The concurrency must carry the rate at the latency the calls really had: the slowest clean level's mean.
            var clean = levels.Where(l => l.FailureCount == 0 && l.LatencyMeanMs is not null).ToArray();
            var latency = clean.Length > 0 ? clean.Max(l => l.LatencyMeanMs!.Value) : _reachableLatency.TotalMilliseconds;
            recommendation = Recommender.ForRate(rate, latency, clean.LastOrDefault()?.LatencyP99Ms);
        }
        else
        {
            (capacity, endedBy) = await SearchAsync(levels, verdicts, endedBy, deadline.Token, stop.Token).ConfigureAwait(false);
            recommendation = Decide(levels, capacity, endedBy);
        }

        OpenLoopResult? openLoop = null;
        if (recommendation.IsFinal)
        {
            (openLoop, recommendation, endedBy) = await ConfirmAsync(recommendation, levels, endedBy, deadline.Token, stop.Token).ConfigureAwait(false);
        }

        var points = levels.Select(l => ((double)l.Concurrency, l.OkPerSecond)).ToArray();
        var usl = UslFit.Fit(points);
        var band = usl is null ? null : UslBand.Bootstrap(points, usl);
        return new ProbeReport(
            _settings.Url.ToString(),
            MachineInfo.Current(),
            levels,
            usl,
            band,
            capacity,
            openLoop,
            recommendation,
            _settings.MaxRequests,
            _budget.Sent,
            _time.GetElapsedTime(start).TotalSeconds,
            endedBy);
    }

    /// <summary>Steps 1, 2, 4, ... up to the maximum (always tried last), until a level stops the ramp.</summary>
    private async Task<string> RampAsync(List<LevelResult> levels, List<LevelVerdict> verdicts, CancellationToken deadline, CancellationToken stop)
    {
        for (var n = 1; ; n = n >= _settings.MaxConcurrency / 2 && n < _settings.MaxConcurrency ? _settings.MaxConcurrency : n * 2)
        {
            var (level, verdict) = await MeasureAsync(n, levels, deadline, stop).ConfigureAwait(false);
            if (level is { EndedBy: LevelEnd.Measured } && verdict is { Stop: true, Clean: true })
            {
                // Saturation or latency alone, from one short level, may be a hiccup of a shared machine: measure again
                // before stopping. Rejections and failures are never re-sent.
                _progress.Note($"Confirming {n}: {verdict.Reason}");
                (level, verdict) = await MeasureAsync(n, levels, deadline, stop).ConfigureAwait(false);
            }

            if (level is null)
            {
                return Ended(deadline, stop);
            }

            if (level.EndedBy == LevelEnd.Measured && PacedByMaxRate(level))
            {
                level = level with { EndedBy = LevelEnd.MaxRate };
            }

            levels.Add(verdict.Stop ? level with { StopReason = verdict.Reason } : level);
            verdicts.Add(verdict);
            if (level.EndedBy != LevelEnd.Measured)
            {
                return level.EndedBy;
            }

            if (verdict.Stop || n >= _settings.MaxConcurrency)
            {
                return LevelEnd.Measured;
            }
        }
    }

    /// <summary>True when <c>--max-rate</c> held <paramref name="level"/> down: it started at least 90% of the pace.</summary>
    private bool PacedByMaxRate(LevelResult level) =>
        _settings.MaxRatePerSecond is { } pace && level.Seconds > 0 && level.Requests / level.Seconds >= 0.9 * pace;

    /// <summary>Finds the capacity between the highest level within it and the lowest beyond it (see <see cref="CapacitySearch"/>).</summary>
    private async Task<(CapacityFinding? Finding, string EndedBy)> SearchAsync(List<LevelResult> levels, List<LevelVerdict> verdicts, string endedBy, CancellationToken deadline, CancellationToken stop)
    {
        var (unqueued, deviation, answers) = Unqueued(levels);
        if (unqueued is not { } r0)
        {
            return (null, endedBy);
        }

        var stopLevel = levels.Where((_, i) => verdicts[i].Stop).FirstOrDefault();
        var byRejections = stopLevel is not null && stopLevel.Rejections > CapacitySearch.MaxFailureFraction * Math.Max(1, stopLevel.Requests);
        var search = new CapacitySearch(byRejections, r0, deviation, answers, _settings.SloP99Ms);
        var searched = new List<int>();
        var rechecked = new HashSet<int>();
        var guided = 0;
        while (true)
        {
            // A level cut short (interrupted, out of budget or time) is evidence of neither.
            var judged = levels.Where(l => l.EndedBy is LevelEnd.Measured or LevelEnd.MaxRate).ToArray();
            var beyond = judged.Where(l => search.Failure(l) is not null).Select(l => (int?)l.Concurrency).Min();
            var within = judged.Where(l => search.Failure(l) is null && l.Concurrency < (beyond ?? int.MaxValue)).Select(l => (int?)l.Concurrency).Max();
            var estimate = beyond is null ? null : search.Estimate(judged.Where(l => l.Concurrency >= beyond && search.Failure(l) is not null));
            var finding = new CapacityFinding(byRejections ? CapacityFinding.Rejections : CapacityFinding.Latency, r0, within, beyond, estimate, searched.ToArray(), within + 1 == beyond);
            if (within is not { } low || beyond is not { } high || endedBy != LevelEnd.Measured)
            {
                return (finding, endedBy);
            }

            if (!byRejections && Suspect(search, judged.First(l => l.Concurrency == high), low, estimate) is { } doubt && rechecked.Add(high))
            {
                // Its latency says queued, but Little's law disagrees: a stall of a busy machine looks the same.
                // Measure it once more and keep the lower mean (a stall only ever raises it).
                _progress.Note($"Confirming {high}: {doubt}");
                var (again, _) = await MeasureAsync(high, levels.Where(l => l.Concurrency < high).ToArray(), deadline, stop).ConfigureAwait(false);
                if (again is null || again.EndedBy != LevelEnd.Measured)
                {
                    return (finding, again?.EndedBy ?? Ended(deadline, stop));
                }

                var at = levels.FindIndex(l => l.Concurrency == high);
                if (again.LatencyMeanMs < levels[at].LatencyMeanMs)
                {
                    var why = search.Failure(again);
                    levels[at] = again with { StopReason = why is null ? null : $"beyond capacity: {why}" };
                }

                continue;
            }

            if (CapacitySearch.Next(low, high, estimate, guided) is not { } next)
            {
                return (finding, endedBy);
            }

            _progress.Note(guided < CapacitySearch.GuidedSteps && estimate is { } e
                ? $"Capacity between {low} and {high}: Little's law at the levels beyond puts it at {e.ToString("0.0", CultureInfo.InvariantCulture)}; measuring {next}"
                : $"Capacity between {low} and {high}: measuring {next} (bisection)");
            guided++;
            var (level, verdict) = await MeasureAsync(next, levels.Where(l => l.Concurrency < next).ToArray(), deadline, stop).ConfigureAwait(false);
            if (level is null)
            {
                return (finding, Ended(deadline, stop));
            }

            var failure = level.EndedBy == LevelEnd.Measured ? search.Failure(level, levels.FirstOrDefault(l => l.Concurrency == next - 1)) : null;
            var index = levels.FindIndex(l => l.Concurrency > next);
            index = index < 0 ? levels.Count : index;
            levels.Insert(index, level with { StopReason = failure is null ? null : $"beyond capacity: {failure}" });
            verdicts.Insert(index, verdict with { Stop = false, Reason = failure });
            searched.Add(next);
            _progress.Note(failure is null ? $"  {next} is within capacity" : $"  {next} is beyond capacity: {failure}");
            if (level.EndedBy != LevelEnd.Measured)
            {
                // An incomplete level proves nothing either way: it stays in the table, not in the finding.
                return (finding with { SearchLevels = searched.ToArray() }, level.EndedBy);
            }
        }
    }

    /// <summary>Why a level that looks queued may be a stall instead, or null when nothing says so: Little's law puts
    /// the capacity above it, or its ok/s fell below what the level within capacity under it carried (past a queueing
    /// server's capacity the throughput stays at the capacity's; only a stall makes it fall).</summary>
    private static string? Suspect(CapacitySearch search, LevelResult level, int within, double? estimate)
    {
        if (estimate is { } little && level.Concurrency < little - 1)
        {
            return $"Little's law puts the capacity at {little.ToString("0.0", CultureInfo.InvariantCulture)}, above it";
        }

        return search.Evidence(level) is { } shown && shown < 0.8 * within
            ? $"its ok/s shows {shown.ToString("0.0", CultureInfo.InvariantCulture)} served at once, fewer than the {within} within capacity below it"
            : null;
    }

    /// <summary>R0, the unqueued mean latency, its spread and its answers: the lowest mean of the levels measured in full
    /// without a failure. Queueing only ever raises a level's mean, and a stall of a busy client too (level 1 often pays a
    /// late cold start), so the lowest is the one nearest the service time; the higher levels also have the most answers,
    /// which makes the latency test sharper.</summary>
    private static (double? Mean, double StdDev, long Answers) Unqueued(IReadOnlyList<LevelResult> levels)
    {
        var best = levels.Where(l => l.EndedBy is LevelEnd.Measured or LevelEnd.MaxRate && l.FailureCount == 0 && l.LatencyMeanMs is not null).MinBy(l => l.LatencyMeanMs);
        return best is null ? (null, 0, 0) : (best.LatencyMeanMs, best.LatencyStdDevMs ?? 0, best.Ok);
    }

    /// <summary>The recommendation the levels and the search support, and how sure it is.</summary>
    private Recommendation Decide(IReadOnlyList<LevelResult> levels, CapacityFinding? capacity, string endedBy)
    {
        var within = capacity?.Within is { } w ? levels.First(l => l.Concurrency == w) : null;
        if (capacity is { Exact: true } && within is not null && endedBy == LevelEnd.Measured)
        {
            var beyond = levels.First(l => l.Concurrency == capacity.Beyond);
            var why = beyond.StopReason is { } reason && reason.StartsWith("beyond capacity: ", StringComparison.Ordinal) ? reason["beyond capacity: ".Length..] : null;
            var test = new CapacitySearch(capacity.Signal == CapacityFinding.Rejections, capacity.UnqueuedLatencyMs, 0, 1, _settings.SloP99Ms);
            return Recommender.AtCapacity(within, beyond, "was beyond it: " + (why ?? test.Failure(beyond) ?? "it stopped the ramp"), capacity.Estimate);
        }

        if (within is null && endedBy != LevelEnd.Measured && CleanSoFar(levels) is { } clean)
        {
            // Stopped before a level was judged in full, but every answer so far was ok: that much is known to work.
            return Recommender.AtLeast(clean, EndedText(endedBy));
        }

        if (within is null)
        {
            var first = levels.FirstOrDefault();
            return Recommender.None(first is null
                ? $"nothing was measured ({EndedText(endedBy)})"
                : endedBy == LevelEnd.Measured
                    ? $"every level failed; even {first.Concurrency} at a time: {first.FailureCount.ToString("N0", CultureInfo.InvariantCulture)} of {first.Requests.ToString("N0", CultureInfo.InvariantCulture)} requests failed ({string.Join(", ", first.Failures.Select(f => $"{f.Value.ToString("N0", CultureInfo.InvariantCulture)} {f.Key}"))}); fix the endpoint before choosing a limit"
                    : $"{EndedText(endedBy)} before any level had only ok answers (level {first.Concurrency}: {first.Ok.ToString("N0", CultureInfo.InvariantCulture)} ok of {first.Requests.ToString("N0", CultureInfo.InvariantCulture)})");
        }

        var cause = endedBy != LevelEnd.Measured ? EndedText(endedBy)
            : capacity?.Beyond is { } b ? $"the search between {within.Concurrency} and {b} did not finish"
            : $"--max-concurrency {_settings.MaxConcurrency} was reached without rejections, added latency or flat throughput";
        return Recommender.AtLeast(within, cause);
    }

    /// <summary>The highest level of an unbroken run from the first in which every answer was ok and at least as many
    /// came back as were in flight (so that many really were served at once), finished or cut short; null when none.</summary>
    private static LevelResult? CleanSoFar(IReadOnlyList<LevelResult> levels) =>
        levels.OrderBy(l => l.Concurrency)
            .TakeWhile(l => l.FailureCount == 0 && l.StopReason is null && l.Ok >= l.Concurrency)
            .LastOrDefault();

    private string EndedText(string endedBy) => endedBy switch
    {
        LevelEnd.Interrupted => "the probe was interrupted",
        LevelEnd.MaxRequests => $"--max-requests {_settings.MaxRequests?.ToString("N0", CultureInfo.InvariantCulture)} was spent",
        LevelEnd.Duration => "--duration ran out",
        LevelEnd.MaxRate => $"--max-rate {_settings.MaxRatePerSecond?.ToString("0.##", CultureInfo.InvariantCulture)}/s held the offered load down",
        _ => "the probe stopped",
    };

    /// <summary>Open-loop check of a final recommendation: constant arrivals at its rate, or at 0.9x the throughput found at its limit.</summary>
    private async Task<(OpenLoopResult? Result, Recommendation Recommendation, string EndedBy)> ConfirmAsync(Recommendation recommendation, IReadOnlyList<LevelResult> levels, string endedBy, CancellationToken deadline, CancellationToken stop)
    {
        var limit = recommendation.Limit!.Value;
        var atLimit = levels.FirstOrDefault(l => l.Concurrency == limit);
        var perSecond = recommendation.RatePerSecond ?? (OpenLoopShare * (atLimit?.OkPerSecond ?? 0));
        if (perSecond <= 0)
        {
            return (null, recommendation, endedBy);
        }

        var plan = _settings.Plan;
        _progress.Note($"Open-loop check: {ProbeText.Rate(perSecond)} arrivals/s for up to {plan.OpenLoopDuration.TotalSeconds.ToString("0.#", CultureInfo.InvariantCulture)} s, at most {limit} in flight");
        var closedP99 = atLimit?.LatencyP99Ms ?? recommendation.LatencyP99Ms;
        var result = await _openLoop.RunAsync(perSecond, limit, plan.OpenLoopDuration, plan.OpenLoopMaxRequests, closedP99, stop).ConfigureAwait(false);
        if (!result.Holds && result.Sent == result.Scheduled && (result.Failures.Count == 0 || OpenLoopRunner.FellBehind(result.ScheduleLateMs)))
        {
            // A queue that grew with nothing rejected may be a stall of a busy client machine, and rejections after the
            // client's own schedule fell behind may be its bursts: check once more. A rejected request is never re-sent.
            _progress.Note($"Open loop {result.Verdict}; checking once more");
            result = await _openLoop.RunAsync(perSecond, limit, plan.OpenLoopDuration, plan.OpenLoopMaxRequests, closedP99, stop).ConfigureAwait(false);
        }
        _progress.Note($"Open loop {result.Verdict}; p99 {ProbeText.Ms(result.LatencyP99Ms)} from the intended start, {ProbeText.Ms(result.ServiceP99Ms)} from the send (closed loop: {ProbeText.Ms(closedP99)})");
        if (result.Holds)
        {
            return (result, recommendation, endedBy);
        }

        if (result.Sent < result.Scheduled)
        {
            var ended = Ended(deadline, stop);
            return (result, Recommender.Unconfirmed(recommendation, $"the open-loop check was cut short ({EndedText(ended)})"), ended);
        }

        return (result, Recommender.Unconfirmed(recommendation, $"under open-loop load {result.Verdict}"), endedBy);
    }

    /// <summary>Rejections under load: do they follow the rate? Yes when the rejections name a rate (Retry-After, RateLimit
    /// headers), or when a burst as large as the rejected level, sent after a pause, passes whole (a token bucket refilled;
    /// a concurrency limit would reject it again).</summary>
    private async Task<RateVerdict> CheckRateAsync(List<LevelResult> levels, CancellationToken stop)
    {
        var rejected = levels.FirstOrDefault(l => l.Rejections > _rule.MaxFailureFraction * Math.Max(1, l.Requests));
        if (rejected is null)
        {
            return RateVerdict.None;
        }

        var evidence = new List<string>();
        if (rejected.RateLimitHeaders * 2 > rejected.Rejections)
        {
            evidence.Add($"its rejections at {rejected.Concurrency} carried Retry-After/RateLimit headers");
        }

        // Any rejected level (over 1%) gets the burst: a short level against a bucket with a large burst may be rejected
        // only a few percent of the time, and a concurrency limit rejects the burst again whatever the share was.
        if (!_budget.Exhausted)
        {
            var pause = _settings.Plan.BurstPause;
            var named = evidence.Count > 0;
            var seconds = pause.TotalSeconds.ToString("0.##", CultureInfo.InvariantCulture);
            _progress.Note($"Rate check: {rejected.Concurrency} requests at once after a {seconds} s pause (a rate limit lets them all through, a concurrency limit rejects them again)");
            try
            {
                await Task.Delay(pause, _time, stop).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                return RateVerdict.None;
            }

            var burst = await BurstAsync(rejected.Concurrency, stop).ConfigureAwait(false);
            if (burst is { } passed && passed)
            {
                evidence.Add($"a burst of {rejected.Concurrency} after a pause passed whole");
            }

            _progress.Note(RateCheckFinding(burst, rejected.Concurrency, named));
        }

        var sustained = rejected.OkPerSecondWhileRejecting ?? rejected.OkPerSecond;
        if (evidence.Count > 0 && !_budget.Exhausted)
        {
            // The first figure comes from a short level whose first rejection may come late (few answers after it) and
            // whose bucket may still hold part of its burst: measure again, twice as long, right after the burst drained
            // the bucket, so rejections start at once; that longer measurement is the rate. At twice the concurrency: a
            // rejected worker pauses a latency before it sends again, and on a busy client machine those pauses run late,
            // so at the same concurrency the client itself could send less than the server lets through (one CI run
            // read 155/s of a 300/s bucket); a rate limit passes no more for the extra workers, it only rejects more.
            var pressing = 2 * rejected.Concurrency;
            _progress.Note($"Measuring the rate again at {pressing} at once");
            var twice = _settings.Plan with { MinDuration = 2 * _settings.Plan.MinDuration, MaxDuration = 2 * _settings.Plan.MaxDuration };
            var again = await _runner.RunAsync(pressing, twice, RejectionPause(levels), stop).ConfigureAwait(false);
            if (again.OkPerSecondWhileRejecting is { } low && low < sustained / 2 && !_budget.Exhausted)
            {
                // A rate limit passes the same rate a second later; under half of it is the client's own pace (a starved
                // client machine: one CI run read 23/s of a 100/s bucket). Measure once more, and take that.
                _progress.Note($"Measuring the rate once more: {ProbeText.Rate(low)} ok/s is under half the {ProbeText.Rate(sustained)} ok/s measured first");
                again = await _runner.RunAsync(pressing, twice, RejectionPause(levels), stop).ConfigureAwait(false);
            }

            if (again.OkPerSecondWhileRejecting is { } longer && longer > 0)
            {
                sustained = longer;
            }
        }
        return evidence.Count == 0
            ? RateVerdict.None
            : new RateVerdict(true, sustained, $"{string.Join(" and ", evidence)}; it let {ProbeText.Rate(sustained)} ok/s through while rejecting");
    }

    /// <summary>What the rate check found, in a line: the burst's result and what it says about the limit.</summary>
    private static string RateCheckFinding(bool? burst, int count, bool named) => (burst, named) switch
    {
        (true, _) => $"Rate check: all {count} passed after the pause: the rejections follow the request rate, not the concurrency",
        (false, true) => $"Rate check: some of the {count} were rejected again, but the rejections carried Retry-After/RateLimit headers: treated as a rate limit",
        (false, false) => $"Rate check: some of the {count} were rejected again: the limit is on concurrency, not on rate",
        (null, _) => "Rate check: cut short (budget spent or interrupted): no finding",
    };

    /// <summary>Sends <paramref name="count"/> requests at once on fresh connections; true when none was rejected, null when cut short.</summary>
    private async Task<bool?> BurstAsync(int count, CancellationToken stop)
    {
        using var client = _target.CreateClient(count);
        var sends = new List<Task<SendOutcome>>();
        for (var i = 0; i < count && _budget.TryTake(); i++)
        {
            sends.Add(SendOutcome.SendAsync(_target, client, stop));
        }

        var outcomes = await Task.WhenAll(sends).ConfigureAwait(false);
        if (outcomes.Length < count || outcomes.Any(o => o.Interrupted))
        {
            return null;
        }

        return outcomes.All(o => o.Ok);
    }

    /// <summary>Runs and judges one level; null when it measured nothing (budget spent or cancelled before any answer).</summary>
    private async Task<(LevelResult? Level, LevelVerdict Verdict)> MeasureAsync(int concurrency, IReadOnlyList<LevelResult> earlier, CancellationToken deadline, CancellationToken stop)
    {
        _progress.LevelStarted(concurrency);
        var level = await _runner.RunAsync(concurrency, _settings.Plan, RejectionPause(earlier), stop, LevelAnswers).ConfigureAwait(false);
        if (level.EndedBy == LevelEnd.Interrupted && deadline.IsCancellationRequested)
        {
            level = level with { EndedBy = LevelEnd.Duration };
        }

        if (level.Requests == 0)
        {
            return (null, new LevelVerdict(false, true, null));
        }

        var verdict = _rule.Judge(level, earlier.Count > 0 ? earlier[0] : level, earlier);
        _progress.LevelFinished(verdict.Stop ? level with { StopReason = verdict.Reason } : level, verdict);
        return (level, verdict);
    }

    /// <summary>The most answers one level collects once it has its minimum: a twentieth of the request budget.</summary>
    private long LevelAnswers => _settings.MaxRequests is { } max ? Math.Max(_settings.Plan.MinRequests, max / LevelBudgetShare) : long.MaxValue;

    /// <summary>How long a rejected worker waits: the uncontended latency (level 1's mean, else the first request's).</summary>
    private TimeSpan RejectionPause(IReadOnlyList<LevelResult> earlier) =>
        earlier.Count > 0 && earlier[0].LatencyMeanMs is { } mean ? TimeSpan.FromMilliseconds(mean) : _reachableLatency;

    private string Ended(CancellationToken deadline, CancellationToken stop) =>
        deadline.IsCancellationRequested ? LevelEnd.Duration
        : stop.IsCancellationRequested ? LevelEnd.Interrupted
        : _budget.Exhausted ? LevelEnd.MaxRequests
        : LevelEnd.Measured;

    private async Task WarmUpAsync(CancellationToken stop)
    {
        using var client = _target.CreateClient(1);
        for (var i = 0; i < WarmUpRequests && !stop.IsCancellationRequested && _budget.TryTake(); i++)
        {
            await SendOutcome.SendAsync(_target, client, stop).ConfigureAwait(false);
        }
    }

    /// <summary>One request: does the target answer at all? Throws <see cref="UnreachableTargetException"/> with one line when not.</summary>
    private async Task CheckReachableAsync(CancellationToken deadline, CancellationToken stop)
    {
        if (!_budget.TryTake())
        {
            return;
        }

        using var client = _target.CreateClient(1);
        using var request = _target.CreateRequest();
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stop);
        timeout.CancelAfter(_settings.Timeout);
        var url = _settings.Url;
        var sent = _time.GetTimestamp();
        try
        {
            using var response = await client.SendAsync(request, HttpCompletionOption.ResponseContentRead, timeout.Token).ConfigureAwait(false);
            _reachableLatency = _time.GetElapsedTime(sent);
            var status = (int)response.StatusCode;
            if (status >= 400 && response.StatusCode is not (HttpStatusCode.TooManyRequests or HttpStatusCode.ServiceUnavailable))
            {
                throw new UnreachableTargetException($"{url} answered {status} {response.ReasonPhrase}: probe a URL that answers 2xx to this method and these headers.");
            }
        }
        catch (OperationCanceledException ex) when (deadline.IsCancellationRequested)
        {
            throw new UnreachableTargetException($"{url} did not answer within --duration.", ex);
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            throw;
        }
        catch (OperationCanceledException ex)
        {
            throw new UnreachableTargetException($"{url} did not answer within {_settings.Timeout.TotalSeconds.ToString("0.###", CultureInfo.InvariantCulture)} s (--timeout).", ex);
        }
        catch (HttpRequestException ex)
        {
            throw new UnreachableTargetException(Describe(ex, url), ex);
        }
    }

    private static string Describe(HttpRequestException ex, Uri url)
    {
        var cause = ex.InnerException is SocketException socket ? socket.Message : ex.InnerException?.Message ?? ex.Message;
        return ex.HttpRequestError switch
        {
            HttpRequestError.NameResolutionError => $"host '{url.Host}' does not resolve ({cause.TrimEnd('.')}).",
            HttpRequestError.ConnectionError => $"could not connect to {url.Host}:{url.Port} ({cause.TrimEnd('.')}).",
            HttpRequestError.SecureConnectionError => $"TLS error talking to {url.Host}:{url.Port} ({cause.TrimEnd('.')}).",
            _ => $"{url} failed: {ex.Message.TrimEnd('.')}.",
        };
    }
}
