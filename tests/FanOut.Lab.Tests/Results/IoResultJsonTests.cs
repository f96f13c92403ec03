using System.Text.Json;

using FanOut.Lab.Measurement;
using FanOut.Lab.Results;

namespace FanOut.Lab.Tests.Results;

/// <summary>The real-I/O fields are new and optional: <c>io</c> is null for seed cases and carries every I/O field otherwise.</summary>
public sealed class IoResultJsonTests
{
    private static readonly string[] s_ioFields =
    [
        "successes", "failures", "failuresHttp", "failuresByStatus", "failuresSocket", "failuresTimeout", "failuresOther",
        "itemLatencyP50Ms", "itemLatencyP95Ms", "itemLatencyP99Ms", "successesPerSecond", "peakConcurrentServed", "rejected429", "requestsServed",
        "writeWaitMs", "busyRetries",
    ];

    private static IoRunMetrics Run(long ok, long rejected, double elapsedMs) => new()
    {
        Successes = ok,
        FailuresByStatus = new Dictionary<int, long> { [429] = rejected },
        FailuresSocket = 1,
        FailuresTimeout = 0,
        FailuresOther = 0,
        LatencyP50Ms = 20,
        LatencyP95Ms = 50,
        LatencyP99Ms = 80,
        SuccessesPerSecond = ok * 1000.0 / elapsedMs,
        PeakConcurrentServed = 64,
        Rejected429 = rejected,
        RequestsServed = ok,
    };

    [Fact]
    public void Serialize_SeedCase_HasIoNull()
    {
        var seed = new CaseResult { Strategy = "S", Workload = "W", Parameters = new Dictionary<string, object>(), Runs = 1 };
        using var json = JsonDocument.Parse(ResultsJson.Serialize(seed));
        Assert.Equal(JsonValueKind.Null, json.RootElement.GetProperty("io").ValueKind);
    }

    [Fact]
    public void Serialize_IoCase_HasEveryIoFieldWithTheMeansOfTheRuns()
    {
        var io = IoResult.Of([Run(100, 900, 500), Run(200, 800, 500)]);
        var result = new CaseResult { Strategy = "S", Workload = "W", Parameters = new Dictionary<string, object>(), Runs = 2, Io = io };
        using var json = JsonDocument.Parse(ResultsJson.Serialize(result));
        var element = json.RootElement.GetProperty("io");
        foreach (var field in s_ioFields)
        {
            Assert.True(element.TryGetProperty(field, out _), $"io is missing '{field}'");
        }

        Assert.Equal(150, element.GetProperty("successes").GetDouble());
        Assert.Equal(851, element.GetProperty("failures").GetDouble());
        Assert.Equal(850, element.GetProperty("failuresByStatus").GetProperty("429").GetDouble());
        Assert.Equal(850, element.GetProperty("rejected429").GetDouble());
        Assert.Equal(300, element.GetProperty("successesPerSecond").GetDouble());
        Assert.Equal(64, element.GetProperty("peakConcurrentServed").GetDouble());
        Assert.Equal(JsonValueKind.Null, element.GetProperty("writeWaitMs").ValueKind);

        var copy = ResultsJson.Deserialize<CaseResult>(ResultsJson.Serialize(result));
        Assert.Equal(850, copy.Io!.FailuresByStatus["429"]);
    }

    [Fact]
    public void Of_AnyRunWithoutIo_IsNull()
    {
        Assert.Null(IoResult.Of([Run(1, 0, 1), null]));
        Assert.Null(IoResult.Of([]));
    }

    [Fact]
    public void Write_CsvAndTable_ShowIoColumnsOnlyForIoScenarios()
    {
        var ioCase = new CaseResult { Strategy = "Task.WhenAll", Workload = "W", Parameters = new Dictionary<string, object> { ["itemCount"] = 2000 }, Runs = 2, MeanMs = 200, PeakInFlight = 1000, Io = IoResult.Of([Run(100, 900, 500)]) };
        var seedCase = ioCase with { Io = null };

        var ioTable = ResultTable.For(ScenarioResults.Of("io", ioCase));
        Assert.Contains("OK/s", ioTable.Headers);
        Assert.DoesNotContain("DB write wait", ioTable.Headers);
        var row = ioTable.Rows[0];
        Assert.Equal("1,000 / 64", row[ioTable.Headers.ToList().IndexOf("In flight / server peak")]);
        Assert.Equal("900 x 429, 1 socket", row[ioTable.Headers.ToList().IndexOf("Failed")]);
        Assert.Contains("Eff.", ResultTable.For(ScenarioResults.Of("seed", seedCase)).Headers);
        Assert.DoesNotContain("OK/s", ResultTable.For(ScenarioResults.Of("seed", seedCase)).Headers);

        var csv = ResultsCsv.Write(new LabResults { Machine = MachineInfo.Current(), StartedAt = DateTimeOffset.UnixEpoch, Scenarios = [ScenarioResults.Of("io", ioCase), ScenarioResults.Of("seed", seedCase)] }).Split('\n');
        var header = csv[0].TrimEnd('\r').Split(',');
        var successes = Array.IndexOf(header, "successes");
        Assert.True(successes > 0);
        Assert.Equal("100", csv[1].Split(',')[successes]);
        Assert.Equal(string.Empty, csv[2].Split(',')[successes]);
    }
}
