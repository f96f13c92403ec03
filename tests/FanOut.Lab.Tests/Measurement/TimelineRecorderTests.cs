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

        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 50_000; i++)
        {
            completed++;
            recorder.Record(Stopwatch.GetTimestamp(), 3, 14, i);
        }

        Assert.Equal(0, GC.GetAllocatedBytesForCurrentThread() - before);
        Assert.Equal(4, recorder.ToTimeline(1).Limit!.Max());
    }
}
