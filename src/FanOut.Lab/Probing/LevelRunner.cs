using System.Runtime.CompilerServices;

namespace FanOut.Lab.Probing;

/// <summary>Measures one concurrency level: a closed loop of N workers through one <see cref="SocketsHttpHandler"/> with N connections.</summary>
/// <remarks>One async loop per worker (no task per request). Each worker takes a ticket from the shared
/// <see cref="RequestBudget"/> before every send, so <c>--max-requests</c> is never exceeded; cancelling the token
/// (Ctrl+C, SIGTERM, <c>--duration</c>) cancels the requests in flight at once.</remarks>
internal sealed class LevelRunner(ProbeTarget target, RequestBudget budget, TimeProvider time)
{
    /// <summary>Runs <paramref name="concurrency"/> workers until <paramref name="plan"/> says the level is measured.</summary>
    /// <param name="concurrency">Workers in the closed loop.</param>
    /// <param name="plan">How long the level runs.</param>
    /// <param name="rejectionPause">After a rejection (429/503) a worker waits this long before its next send: a rejected
    /// request then occupies its worker as long as an answer would have, so the level offers the same N/R requests per
    /// second whether the server rejects or not, instead of hammering it with instant retries.</param>
    /// <param name="cancellationToken">Stops the level at once.</param>
    /// <param name="maxAnswers">Once it has <see cref="LevelPlan.MinRequests"/>, the level also ends at this many answers,
    /// even before <see cref="LevelPlan.MinDuration"/>: a share of the request budget, so a fast endpoint's level 1 does
    /// not spend all of it.</param>
    /// <returns>The level; <see cref="LevelResult.EndedBy"/> says whether it ran its plan, ran out of budget or was cancelled.</returns>
    public async Task<LevelResult> RunAsync(int concurrency, LevelPlan plan, TimeSpan rejectionPause, CancellationToken cancellationToken, long maxAnswers = long.MaxValue)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(concurrency, 1);
        ArgumentNullException.ThrowIfNull(plan);
        using var client = target.CreateClient(concurrency);
        var recorders = Enumerable.Range(0, concurrency).Select(_ => new LevelRecorder()).ToArray();
        var completed = new StrongBox<long>();
        var start = time.GetTimestamp();
        var workers = recorders.Select(r => Task.Run(() => WorkAsync(client, r, plan, maxAnswers, rejectionPause, start, completed, cancellationToken), CancellationToken.None)).ToArray();
        await Task.WhenAll(workers).ConfigureAwait(false);
        var seconds = time.GetElapsedTime(start).TotalSeconds;
        var endedBy = cancellationToken.IsCancellationRequested ? LevelEnd.Interrupted
            : workers.Any(w => w.Result) ? LevelEnd.MaxRequests
            : LevelEnd.Measured;
        return LevelRecorder.Merge(concurrency, recorders, start, seconds, time, endedBy);
    }

    /// <summary>One worker's loop; returns true when it stopped because the budget was spent.</summary>
    private async Task<bool> WorkAsync(HttpClient client, LevelRecorder recorder, LevelPlan plan, long maxAnswers, TimeSpan rejectionPause, long start, StrongBox<long> completed, CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            var elapsed = time.GetElapsedTime(start);
            var answers = Interlocked.Read(ref completed.Value);
            if (elapsed >= plan.MaxDuration || (answers >= plan.MinRequests && (elapsed >= plan.MinDuration || answers >= maxAnswers)))
            {
                return false;
            }

            if (!await budget.TakeAsync(cancellationToken).ConfigureAwait(false))
            {
                return !cancellationToken.IsCancellationRequested;
            }

            var sent = time.GetTimestamp();
            var outcome = await SendOutcome.SendAsync(target, client, cancellationToken).ConfigureAwait(false);
            if (outcome.Interrupted)
            {
                return false;
            }

            var answered = time.GetTimestamp();
            recorder.Record(outcome, time.GetElapsedTime(sent, answered).TotalMilliseconds, answered);
            Interlocked.Increment(ref completed.Value);
            var pause = rejectionPause - time.GetElapsedTime(sent, answered);
            if (outcome.IsRejection && pause > TimeSpan.Zero && !await PauseAsync(pause, cancellationToken).ConfigureAwait(false))
            {
                return false;
            }
        }

        return false;
    }

    /// <summary>Waits <paramref name="pause"/>; false when cancelled meanwhile.</summary>
    private async Task<bool> PauseAsync(TimeSpan pause, CancellationToken cancellationToken)
    {
        try
        {
            await Task.Delay(pause, time, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }
}
