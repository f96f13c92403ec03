using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Tests.Results;

namespace FanOut.Lab.Tests.Scenarios;

/// <summary>Every verdict ends with what FanOut's default did: its time against the fastest bounded row, or its I/O outcome.</summary>
public sealed class DefaultLimitVerdictTests
{
    private const int MaxLimit = 256;

    [Fact]
    public void Describe_ComparesTheDefaultWithTheFastestRowWithinItsMaximum()
    {
        var measured = Result(
            Row("Task.WhenAll", 100, meanMs: 8, peakInFlight: 500), // faster, but more in flight than the default may have
            Row("FanOut (Fixed 50)", 100, meanMs: 10, peakInFlight: 50),
            Row("FanOut (adaptive)", 100, meanMs: 15, peakInFlight: 100, limitFinal: 128, limitPeak: 128));

        var sentence = DefaultLimitVerdict.Describe(measured, MaxLimit);

        Assert.Equal("FanOut's default: FanOut (adaptive) at N=100: 15.0 ms, 1.50x the fastest row with at most 256 in flight (FanOut (Fixed 50) 10.0 ms), limit settled at 128 (peak 128).", sentence);
    }

    [Fact]
    public void Describe_DefaultFastestOnlyWithinItsMaximum_SaysTheScopeAndTheFasterRow()
    {
        // Issue 18 item 8: seed000-fanout500 printed "68.4 ms, the fastest row" beside Task.WhenAll's 20.3 ms.
        var measured = Result(
            Row("Task.WhenAll", 500, meanMs: 20.3, peakInFlight: 500),
            Row("FanOut (Fixed 50)", 500, meanMs: 213, peakInFlight: 50),
            Row("FanOut (adaptive)", 500, meanMs: 68.4, peakInFlight: 256, limitFinal: 256, limitPeak: 256));

        var sentence = DefaultLimitVerdict.Describe(measured, MaxLimit);

        Assert.Equal("FanOut's default: FanOut (adaptive) at N=500: 68.4 ms, the fastest row with at most 256 in flight (Task.WhenAll took 20.3 ms with 500 in flight), limit settled at 256 (peak 256).", sentence);
    }

    [Fact]
    public void Describe_DefaultFasterThanEveryRow_IsTheFastestRow()
    {
        var measured = Result(
            Row("Task.WhenAll", 500, meanMs: 30, peakInFlight: 500),
            Row("FanOut (adaptive)", 500, meanMs: 25, peakInFlight: 256, limitFinal: 256, limitPeak: 256));

        Assert.Contains("25.0 ms, the fastest row, limit", DefaultLimitVerdict.Describe(measured, MaxLimit), StringComparison.Ordinal);
    }

    [Fact]
    public void Describe_SlowerThanABoundedRow_ComparesWithinTheScope()
    {
        var measured = Result(
            Row("Task.WhenAll", 500, meanMs: 20, peakInFlight: 500),
            Row("FanOut (Fixed 50)", 500, meanMs: 40, peakInFlight: 50),
            Row("FanOut (adaptive)", 500, meanMs: 60, peakInFlight: 256, limitFinal: 256, limitPeak: 256));

        var sentence = DefaultLimitVerdict.Describe(measured, MaxLimit);

        Assert.Contains("60.0 ms, 1.50x the fastest row with at most 256 in flight (FanOut (Fixed 50) 40.0 ms), limit", sentence, StringComparison.Ordinal);
    }

    [Fact]
    public void Describe_OneClausePerParameterSet()
    {
        var measured = Result(
            Row("Task.WhenAll", 10, meanMs: 12, peakInFlight: 10),
            Row("FanOut (adaptive)", 10, meanMs: 12, peakInFlight: 10, limitFinal: 128, limitPeak: 128),
            Row("Task.WhenAll", 100, meanMs: 12, peakInFlight: 100),
            Row("FanOut (adaptive)", 100, meanMs: 24, peakInFlight: 100, limitFinal: 128, limitPeak: 128));

        var sentence = DefaultLimitVerdict.Describe(measured, MaxLimit);

        Assert.Contains("at N=10: 12.0 ms, 1.00x the fastest row", sentence, StringComparison.Ordinal);
        Assert.Contains("at N=100: 24.0 ms, 2.00x the fastest row", sentence, StringComparison.Ordinal);
    }

    [Fact]
    public void Describe_RealIo_StatesItemsOkAndTheServersRefusals()
    {
        var io = new IoResult { Successes = 2000, Failures = 70, SuccessesPerSecond = 2217, Rejected429 = 70 };
        var row = Row("FanOut (default, 429 thrown)", 2000, meanMs: 902, peakInFlight: 192, limitFinal: 128, limitPeak: 192);
        var fromChild = new Dictionary<string, object> { ["itemCount"] = System.Text.Json.JsonDocument.Parse("2000").RootElement }; // as a child process's results read back
        var measured = Result(row with { Io = io, Parameters = fromChild });

        var sentence = DefaultLimitVerdict.Describe(measured, MaxLimit);

        Assert.Equal("FanOut's default: FanOut (default, 429 thrown) at N=2000: 2,000 of 2,000 items ok at 2,217 ok/s in 902 ms, the server answered 429 to 70 calls (3.4 % of calls), limit settled at 128 (peak 192).", sentence);
    }

    [Fact]
    public void Append_WithoutADefaultRow_LeavesTheVerdictAsItIs()
    {
        var measured = Result(Row("Task.WhenAll", 100, meanMs: 8, peakInFlight: 100));

        Assert.Equal("Agrees.", DefaultLimitVerdict.Append("Agrees.", measured, MaxLimit));
    }

    private static CaseResult Row(string strategy, int items, double meanMs, double peakInFlight, double? limitFinal = null, double? limitPeak = null) => new()
    {
        Strategy = strategy,
        Workload = "w",
        Parameters = new Dictionary<string, object> { ["itemCount"] = items },
        Runs = 3,
        MeanMs = meanMs,
        PeakInFlight = peakInFlight,
        LimitFinal = limitFinal,
        LimitPeak = limitPeak,
    };

    private static ScenarioResult Result(params CaseResult[] cases) => ScenarioResults.Of("s", cases);
}
