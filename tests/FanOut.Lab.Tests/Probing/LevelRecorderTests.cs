using FanOut.Lab.Probing;

namespace FanOut.Lab.Tests.Probing;

public sealed class LevelRecorderTests
{
    /// <summary>
    /// Closed-loop workers against a token bucket (nginx's <c>limit_req ... burst=B nodelay</c>), simulated: the rate read
    /// while rejecting is the bucket's refill, not inflated by the answers to requests the burst let through just before
    /// the first rejection (a CI run read nginx's 100/s as 111/s with 16 in flight of 50 ms calls).
    /// </summary>
    [Theory]
    [InlineData(100, 20, 50, 16)]
    [InlineData(100, 20, 50, 32)]
    [InlineData(300, 50, 10, 16)]
    [InlineData(50, 5, 100, 16)]
    public void Merge_TokenBucketWithBurst_ReadsTheRefillRateWhileRejecting(double rate, int burst, int latencyMs, int concurrency)
    {
        var time = TimeProvider.System;
        const double Seconds = 2;
        var workers = SimulateTokenBucket(rate, burst, latencyMs / 1000.0, concurrency, Seconds, time.TimestampFrequency);

        var level = LevelRecorder.Merge(concurrency, workers, 0, Seconds, time, LevelEnd.Measured);

        Assert.NotNull(level.OkPerSecondWhileRejecting);
        Assert.InRange(level.OkPerSecondWhileRejecting.Value, 0.97 * rate, 1.03 * rate);
    }

    /// <summary>Each worker sends, waits for its answer (ok after the latency, 429 after a millisecond), pauses a latency after a
    /// 429, and sends again; latencies vary by up to a tenth either way (seeded), so the workers do not move in lockstep.</summary>
    private static List<LevelRecorder> SimulateTokenBucket(double rate, int burst, double latency, int concurrency, double seconds, long frequency)
    {
        var recorders = Enumerable.Range(0, concurrency).Select(_ => new LevelRecorder()).ToList();
        var random = new Random(7);
        var sends = new PriorityQueue<int, double>();
        for (var w = 0; w < concurrency; w++)
        {
            sends.Enqueue(w, 0);
        }

        double tokens = burst + 1, refilledAt = 0;
        while (sends.TryDequeue(out var worker, out var at))
        {
            tokens = Math.Min(burst + 1, tokens + (at - refilledAt) * rate);
            refilledAt = at;
            var admitted = tokens >= 1;
            tokens -= admitted ? 1 : 0;
            var answered = at + (admitted ? latency * (0.9 + 0.2 * random.NextDouble()) : 0.001);
            if (answered > seconds)
            {
                continue;
            }

            var outcome = admitted ? SendOutcome.Answered(System.Net.HttpStatusCode.OK, false) : SendOutcome.Answered(System.Net.HttpStatusCode.TooManyRequests, false);
            recorders[worker].Record(outcome, (answered - at) * 1000, (long)(answered * frequency));
            sends.Enqueue(worker, admitted ? answered : answered + latency);
        }

        return recorders;
    }
}
