using System.Runtime.CompilerServices;

using FanOut.Lab.Results;

namespace FanOut.Lab.Tests.Results;

/// <summary>results.csv and report.md for a fixed results.json (a real run's seed000, seed001-io and downstream-capacity,
/// plus a failed case, a note and a timeline) must match the committed files byte for byte.</summary>
/// <remarks>After an intended change, run the tests with <c>FANOUT_UPDATE_GOLDEN=1</c> to rewrite the golden files, and
/// review the diff before committing it.</remarks>
public sealed class GoldenFileTests
{
    private const string UpdateVariable = "FANOUT_UPDATE_GOLDEN";

    [Fact]
    public void Write_Csv_MatchesGoldenFile() => AssertGolden("results.csv", ResultsCsv.Write(Fixture()));

    [Fact]
    public void Write_Markdown_MatchesGoldenFile() => AssertGolden("report.md", MarkdownReport.Write(Fixture()));

    [Fact]
    public void Serialize_FixtureRoundTrip_KeepsTimelineAndOldFieldsLoad()
    {
        var results = Fixture();
        var adaptive = results.Scenarios[0].Cases.Single(c => c.Strategy == "FanOut (adaptive)");
        Assert.Equal([1, 4, 16, 16], adaptive.Timeline!.Limit!);
        Assert.Null(results.Scenarios[0].Cases[0].Timeline);
        var copy = ResultsJson.Deserialize<LabResults>(ResultsJson.Serialize(results));
        Assert.Equal(adaptive.Timeline.InFlight, copy.Scenarios[0].Cases.Single(c => c.Strategy == "FanOut (adaptive)").Timeline!.InFlight);
    }

    internal static LabResults Fixture() =>
        ResultsJson.Deserialize<LabResults>(File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "Results", "Golden", "results.json")));

    private static void AssertGolden(string name, string actual, [CallerFilePath] string thisFile = "")
    {
        var source = Path.Combine(Path.GetDirectoryName(thisFile)!, "Golden", name);
        if (Environment.GetEnvironmentVariable(UpdateVariable) == "1")
        {
            File.WriteAllText(source, actual);
        }

        var expected = File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "Results", "Golden", name));
        if (expected.ReplaceLineEndings() != actual.ReplaceLineEndings())
        {
            var expectedLines = expected.ReplaceLineEndings().Split(Environment.NewLine);
            var actualLines = actual.ReplaceLineEndings().Split(Environment.NewLine);
            var first = Enumerable.Range(0, Math.Max(expectedLines.Length, actualLines.Length))
                .First(i => i >= expectedLines.Length || i >= actualLines.Length || expectedLines[i] != actualLines[i]);
            Assert.Fail($"{name} differs from the golden file at line {first + 1}:\nexpected: {(first < expectedLines.Length ? expectedLines[first] : "<end>")}\nactual:   {(first < actualLines.Length ? actualLines[first] : "<end>")}\n" +
                $"If the change is intended, rerun with {UpdateVariable}=1 and review the diff of {source}.");
        }
    }
}
