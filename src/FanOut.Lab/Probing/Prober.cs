using System.Globalization;
using System.Net;
using System.Net.Sockets;

using FanOut.Lab.Results;

namespace FanOut.Lab.Probing;

/// <summary>Runs <c>fanout probe</c>: checks the target answers, steps the concurrency up until the level-stopping rule
/// says stop, measures the Little's-law knee between the levels, checks whether rejections follow the rate, fits the
/// USL and recommends a limit.</summary>
/// <remarks>Cancelling the token (Ctrl+C, SIGTERM) stops sending at once; the report then holds the levels measured so
/// far. <see cref="ProbeSettings.Duration"/> and <see cref="ProbeSettings.MaxRequests"/> end it the same way.</remarks>
public sealed class Prober
{
    /// <summary>The share of a level's requests that must be rejected before a burst may tell a rate limit from a concurrency limit.</summary>
    private const double BurstEvidenceFraction = 0.10;

    /// <summary>A level scaled almost linearly when its ok/s grew by at least this share of its concurrency's growth.</summary>
    private const double LinearShare = 0.8;

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
    private TimeSpan _reachableLatency;
    private int? _knee;

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
        _budget = new RequestBudget(settings.MaxRequests);
        _runner = new LevelRunner(_target, _budget, time);
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
        await WarmUpAsync(stop.Token).ConfigureAwait(false);

        var levels = new List<LevelResult>();
        var verdicts = new List<LevelVerdict>();
        var endedBy = await RampAsync(levels, verdicts, deadline.Token, stop.Token).ConfigureAwait(false);
        var rate = RateVerdict.None;
        if (endedBy == LevelEnd.Measured)
        {
            rate = await CheckRateAsync(levels, stop.Token).ConfigureAwait(false);
            if (!rate.IsRate)
            {
                endedBy = await RefineAsync(levels, verdicts, deadline.Token, stop.Token).ConfigureAwait(false);
            }
        }

        var usl = UslFit.Fit(levels.Select(l => ((double)l.Concurrency, l.OkPerSecond)).ToArray());
        var recommendation = Recommender.Recommend(levels, verdicts, rate, usl, _knee);
        return new ProbeReport(
            _settings.Url.ToString(),
            MachineInfo.Current(),
            levels,
            usl,
            recommendation,
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

    /// <summary>Measures the Little's-law knee when it lies between two measured levels: N* = X_max x R0, the best clean
    /// ok/s times the unqueued cycle time, the fewest requests in flight that can carry the best throughput.</summary>
    /// <remarks>A closed-loop worker's cycle is N / X (Little's law: the request's latency plus the client's own time).
    /// Below the knee it stays flat; past it, it grows as N / X_max. R0 is the median cycle of the clean levels up to the
    /// best one: most of them lie below the knee, and a median ignores the one or two a busy machine slowed down. The knee
    /// is never put below a level that still scaled almost linearly (<see cref="StillLinear"/>).</remarks>
    private async Task<string> RefineAsync(List<LevelResult> levels, List<LevelVerdict> verdicts, CancellationToken deadline, CancellationToken stop)
    {
        var clean = levels.Where((_, i) => verdicts[i].Clean && levels[i].OkPerSecond > 0).ToArray();
        if (clean.Length == 0)
        {
            return LevelEnd.Measured;
        }

        var best = clean.MaxBy(l => l.OkPerSecond)!;
        var cycles = clean.Where(l => l.Concurrency <= best.Concurrency).Select(l => 1000.0 * l.Concurrency / l.OkPerSecond).Order().ToArray();
        var uncontendedMs = cycles.Length % 2 == 1 ? cycles[cycles.Length / 2] : (cycles[(cycles.Length / 2) - 1] + cycles[cycles.Length / 2]) / 2;
        var knee = Math.Max(StillLinear(levels, verdicts), (int)Math.Round(best.OkPerSecond * uncontendedMs / 1000));
        _knee = knee;
        var firstUnclean = levels.Where((_, i) => !verdicts[i].Clean).Select(l => l.Concurrency).DefaultIfEmpty(int.MaxValue).Min();
        if (knee <= 1 || knee >= _settings.MaxConcurrency || knee >= firstUnclean || levels.Any(l => l.Concurrency == knee))
        {
            return LevelEnd.Measured;
        }

        _progress.Note($"Little's law knee: best {ProbeText.Rate(best.OkPerSecond)} ok/s x {ProbeText.Ms(uncontendedMs)} unqueued cycle = {knee} in flight; measuring {knee}");
        var below = levels.Where(l => l.Concurrency < knee).ToArray();
        var (level, verdict) = await MeasureAsync(knee, below, deadline, stop).ConfigureAwait(false);
        if (level is { EndedBy: LevelEnd.Measured } && verdict.Clean && level.OkPerSecond < Recommender.NearBest * best.OkPerSecond)
        {
            // A stall of a busy machine only ever lowers throughput: measure again and keep the better of the two.
            _progress.Note($"Confirming {knee}: {ProbeText.Rate(level.OkPerSecond)} ok/s is under {Recommender.NearBest * 100:0}% of the best");
            var (again, againVerdict) = await MeasureAsync(knee, below, deadline, stop).ConfigureAwait(false);
            if (again is not null && (again.OkPerSecond > level.OkPerSecond || again.EndedBy != LevelEnd.Measured))
            {
                (level, verdict) = (again, againVerdict);
            }
        }

        if (level is null)
        {
            return Ended(deadline, stop);
        }

        var index = levels.FindIndex(l => l.Concurrency > knee);
        levels.Insert(index, level);
        verdicts.Insert(index, verdict with { Stop = false, Reason = null });
        return level.EndedBy;
    }

    /// <summary>The highest clean level that still scaled almost linearly from the level before it (ok/s grew by at
    /// least <see cref="LinearShare"/> of the concurrency's growth): the knee is not below it. 1 when none did.</summary>
    private static int StillLinear(List<LevelResult> levels, List<LevelVerdict> verdicts)
    {
        var linear = 1;
        for (var i = 1; i < levels.Count; i++)
        {
            var (previous, level) = (levels[i - 1], levels[i]);
            if (verdicts[i].Clean && verdicts[i - 1].Clean && previous.OkPerSecond > 0
                && level.OkPerSecond / previous.OkPerSecond >= LinearShare * level.Concurrency / previous.Concurrency)
            {
                linear = level.Concurrency;
            }
        }

        return linear;
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

        if (rejected.Rejections >= BurstEvidenceFraction * rejected.Requests && !_budget.Exhausted)
        {
            var pause = _settings.Plan.BurstPause;
            _progress.Note($"Rate check: {rejected.Concurrency} requests at once after a {pause.TotalSeconds.ToString("0.##", CultureInfo.InvariantCulture)} s pause");
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
        }

        var sustained = rejected.OkPerSecondWhileRejecting ?? rejected.OkPerSecond;
        if (evidence.Count > 0 && !_budget.Exhausted)
        {
            // The rate comes from one short level; a stall of a busy machine only ever lowers it, so measure it again
            // at the same concurrency, twice as long, and keep the higher.
            _progress.Note($"Measuring the rate again at {rejected.Concurrency} at once");
            var longer = _settings.Plan with { MinDuration = 2 * _settings.Plan.MinDuration, MaxDuration = 2 * _settings.Plan.MaxDuration };
            var again = await _runner.RunAsync(rejected.Concurrency, longer, RejectionPause(levels), stop).ConfigureAwait(false);
            sustained = Math.Max(sustained, again.OkPerSecondWhileRejecting ?? 0);
        }
        return evidence.Count == 0
            ? RateVerdict.None
            : new RateVerdict(true, sustained, $"{string.Join(" and ", evidence)}; it let {ProbeText.Rate(sustained)} ok/s through while rejecting");
    }

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
        var level = await _runner.RunAsync(concurrency, _settings.Plan, RejectionPause(earlier), stop).ConfigureAwait(false);
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
