using FanOut.Lab.Measurement;

namespace FanOut.Lab.Tests.Measurement;

/// <summary>How an incident's samples are read: settling, what followed it, goodput, a pause.</summary>
public sealed class IncidentReadingTests
{
    [Fact]
    public void Read_LimitEntersTheBandAndStays_SettlesAtTheFirstSampleOfTheLastStretch()
    {
        IncidentSample[] samples =
        [
            new(0, 32, 0, 0, 0),
            new(100, 32, 100, 0, 100),     // the change
            new(150, 30, 150, 10, 130),    // out of the band (12-20)
            new(200, 18, 200, 12, 170),    // in
            new(250, 22, 250, 14, 200),    // out again
            new(300, 17, 300, 15, 240),    // in: settles here
            new(400, 16, 400, 17, 320),
            new(500, 15, 500, 18, 400),    // the window's end
            new(600, 40, 600, 30, 480),    // after the window: ignored
        ];

        var reading = IncidentReading.Read(samples, changeMs: 100, settleFromMs: 100, endMs: 500, bandLow: 12, bandHigh: 20);

        Assert.NotNull(reading);
        Assert.Equal(200, reading.SettleMs);
        Assert.Equal((15, 17), (reading.LimitLow, reading.LimitHigh));
        Assert.Equal(3, reading.RejectedAfterSettling);          // 18 - 15
        Assert.Equal(200, reading.AnsweredAfterSettling);        // 500 - 300
        Assert.Equal(750, reading.SuccessesPerSecond);           // (400 - 100) items in 0.4 s
        Assert.Equal((32, 15), (reading.LimitAtChange, reading.LimitAtEnd));
        Assert.Equal(0, reading.PauseRejected);
    }

    [Fact]
    public void Read_LimitOutOfTheBandAtTheEnd_NeverSettles()
    {
        IncidentSample[] samples = [new(0, 32, 0, 0, 0), new(100, 16, 10, 0, 10), new(200, 25, 20, 0, 20)];

        var reading = IncidentReading.Read(samples, changeMs: 0, settleFromMs: 0, endMs: 200, bandLow: 12, bandHigh: 20);

        Assert.NotNull(reading);
        Assert.Null(reading.SettleMs);
        Assert.Null(reading.RejectedAfterSettling);
        Assert.Equal(25, reading.LimitAtEnd);
    }

    [Fact]
    public void Read_PauseBeforeSettling_CountsTheCallsTurnedAwayInItAndSettlesFromItsEnd()
    {
        // During the pause 30 calls admitted before it were served and 40 sent into it were turned away.
        IncidentSample[] samples = [new(0, 32, 0, 0, 0), new(100, 32, 50, 0, 50), new(600, 4, 120, 40, 80), new(700, 30, 220, 40, 180), new(800, 32, 320, 40, 280)];

        var reading = IncidentReading.Read(samples, changeMs: 100, settleFromMs: 600, endMs: 800, bandLow: 24, bandHigh: 40);

        Assert.NotNull(reading);
        Assert.Equal(40, reading.PauseRejected);                 // the 429s, not the 70 answers
        Assert.Equal(100, reading.SettleMs);                     // at 700, 100 ms after the pause's end
        Assert.Equal(0, reading.RejectedAfterSettling);
    }

    [Fact]
    public void Read_InTheBandAtTheLastSampleOnly_NeverSettles()
    {
        IncidentSample[] samples = [new(0, 4, 0, 0, 0), new(100, 10, 10, 0, 10), new(200, 28, 20, 0, 20)];

        var reading = IncidentReading.Read(samples, changeMs: 0, settleFromMs: 0, endMs: 200, bandLow: 24, bandHigh: 40);

        Assert.NotNull(reading);
        Assert.Null(reading.SettleMs);
        Assert.Equal(28, reading.LimitAtEnd);
    }

    [Fact]
    public void Read_NoSampleInTheWindow_IsNull()
    {
        Assert.Null(IncidentReading.Read([new(0, 4, 0, 0, 0)], changeMs: 100, settleFromMs: 100, endMs: 200, bandLow: 1, bandHigh: 8));
    }
}
