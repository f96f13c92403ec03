using System.Diagnostics;

using FanOut.Lab.Measurement;

namespace FanOut.Lab.Tests.Measurement;

public sealed class TimelineRecorderTests
{
    [Fact]
    public void Record_ManyMoreSamplesThanPoints_KeepsAtMostMaxPointsThePeakAndEveryCompletion()
    {
        long completed = 0;
        var recorder = new TimelineRecorder(new InFlightProbe(), new TimelineSources(Completed: () => completed));
        var start = Stopwatch.GetTimestamp();
        recorder.Start(start);
        const int Samples = 7_777;
        const int SpikeAt = 4_321;
        for (var i = 0; i < Samples; i++)
        {
            completed += 2;
            recorder.Record(start + (i * Stopwatch.Frequency / 1000), poolThreads: i == SpikeAt ? 999 : 3, osThreads: 14, queueLength: 0);
        }

        var timeline = recorder.ToTimeline(Samples);

        Assert.InRange(timeline.TimeMs.Count, TimelineRecorder.MaxPoints / 4, TimelineRecorder.MaxPoints);
        Assert.Equal(999, timeline.PoolThreads.Max());
        Assert.Equal(2L * Samples, timeline.Completed!.Sum());
        Assert.Null(timeline.Limit);
        Assert.Null(timeline.ServerInFlight);
        Assert.True(timeline.TimeMs.SequenceEqual(timeline.TimeMs.Order()), "time only goes forward");
        Assert.InRange(timeline.TimeMs[^1], Samples - 2, Samples);
    }

    [Fact]
    public void Record_AfterWarmUp_AllocatesNothingPerSample()
    {
        long completed = 0;
        int? limit = 4;
        var recorder = new TimelineRecorder(new InFlightProbe(), new TimelineSources(() => limit, () => completed, () => completed / 2, () => 3));
        recorder.Start(Stopwatch.GetTimestamp());
        recorder.Record(Stopwatch.GetTimestamp(), 3, 14, 1);

        // Less than a byte per sample: one allocation per sample would be 24 bytes or more each, 1.2 MB here. Not 0: under
        // two busy loops the runtime once allocated 3,760 bytes on this thread during the loop (once, not per sample).
        const int samples = 50_000;
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < samples; i++)
        {
            completed++;
            recorder.Record(Stopwatch.GetTimestamp(), 3, 14, i);
        }

        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(allocated < samples, $"{allocated} bytes over {samples} samples");
        Assert.Equal(4, recorder.ToTimeline(1).Limit!.Max());
    }

    [Fact]
    public void ToTimeline_LateFirstSampleOrGap_SaysTheSamplerFellBehind()
    {
        // Issue 18 item 12: Task.WhenAll's 20 ms run once had its first sample at 17.7 ms.
        var recorder = new TimelineRecorder(new InFlightProbe(), new TimelineSources());
        var start = Stopwatch.GetTimestamp();
        recorder.Start(start);
        recorder.Record(start + Ms(17.7), 3, 14, 0);
        recorder.Record(start + Ms(18.7), 3, 14, 0);
        recorder.Record(start + Ms(19.7), 3, 14, 0);

        var timeline = recorder.ToTimeline(20);

        Assert.Equal(17.7, timeline.FirstSampleMs!.Value, 2);
        Assert.Equal(1.0, timeline.LargestGapMs!.Value, 2);
        Assert.Equal("the sampler fell behind: first sample 17.7 ms after the start", timeline.SamplerFellBehind());
    }

    [Fact]
    public void ToTimeline_SampledFromTheStartEveryMillisecond_KeptUp()
    {
        var recorder = new TimelineRecorder(new InFlightProbe(), new TimelineSources());
        var start = Stopwatch.GetTimestamp();
        recorder.Start(start);
        for (var i = 0; i <= 20; i++)
        {
            recorder.Record(start + Ms(i + 0.2), 3, 14, 0);
        }

        var timeline = recorder.ToTimeline(20);

        Assert.Null(timeline.SamplerFellBehind());
        Assert.Equal("the sampler fell behind: a gap of 2.5 ms between samples", (timeline with { LargestGapMs = 2.5 }).SamplerFellBehind());
        Assert.Null((timeline with { RunMs = 5_000, FirstSampleMs = 40 }).SamplerFellBehind()); // runs of 1 s and more are not held to it
    }

    [Fact]
    public void RunRecorder_Start_TakesTheFirstSampleAtTheStartWithoutWaitingForTheSampler()
    {
        // A sampler whose own loop never comes round: the only samples are the one Start takes and the one Stop takes.
        using var sampler = new RuntimeSampler(TimeSpan.FromHours(1));
        var recorder = new RunRecorder(sampler, new InFlightProbe(), new TimelineSources());

        recorder.Start();
        var timeline = recorder.Stop().Timeline!;

        Assert.Equal(2, timeline.TimeMs.Count);
        Assert.Equal(timeline.TimeMs[0], timeline.FirstSampleMs);
        Assert.True(timeline.TimeMs[0] <= timeline.TimeMs[1]);
    }

    private static long Ms(double milliseconds) => (long)(milliseconds * Stopwatch.Frequency / 1000);
}
