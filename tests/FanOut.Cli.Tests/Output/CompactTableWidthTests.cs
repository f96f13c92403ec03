using FanOut.Cli.Output;
using FanOut.Lab.Outcomes;
using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

using Spectre.Console;

namespace FanOut.Cli.Tests.Output;

/// <summary>
/// Issue 18 item 11: the default console output of every scenario fits 170 columns, its verdict wrapping, whatever its table
/// holds. Small in-process results: each scenario's real cases (strategy names, parameters) with wide but plausible figures.
/// </summary>
public sealed class CompactTableWidthTests
{
    public static TheoryData<string> ScenarioIds() => [.. ScenarioCatalog.Default.Scenarios.Select(s => s.Id)];

    [Theory]
    [MemberData(nameof(ScenarioIds))]
    public void ScenarioFinished_Default_EveryLineFits170Columns(string id)
    {
        var scenario = ScenarioCatalog.Default.Scenarios.Single(s => s.Id == id);
        foreach (var kind in new[] { "seed", "io", "outcome" })
        {
            var (output, _) = Render(Result(scenario, kind), wide: false);

            var lines = output.Split('\n').Select(l => l.TrimEnd('\r')).ToArray();
            Assert.All(lines, line => Assert.True(line.Length <= ConsoleProgress.CompactWidth, $"{id} ({kind}): {line.Length} columns: {line}"));
            Assert.Contains(lines, l => l.StartsWith("| Strategy", StringComparison.Ordinal));
        }
    }

    [Fact]
    public void ScenarioFinished_Default_WrapsTheVerdictWithoutLosingAWord()
    {
        var scenario = ScenarioCatalog.Default.Scenarios.Single(s => s.Id == "seed000-errors");
        var result = Result(scenario, "outcome");

        var (output, _) = Render(result, wide: false);

        var here = output[output.IndexOf("Here: ", StringComparison.Ordinal)..].ReplaceLineEndings(" ");
        Assert.Contains(result.Verdict!, string.Join(' ', here.Split(' ', StringSplitOptions.RemoveEmptyEntries)), StringComparison.Ordinal);
        Assert.True(output.Split('\n').Count(l => l.Length > 0 && !l.StartsWith('|')) > 3, "a long verdict takes several lines");
    }

    [Fact]
    public void ScenarioFinished_Wide_KeepsEveryRowOnOneLine()
    {
        var scenario = ScenarioCatalog.Default.Scenarios.Single(s => s.Id == "seed000-errors");
        var result = Result(scenario, "outcome");

        var (output, _) = Render(result, wide: true);

        var tableLines = output.Split('\n').Where(l => l.StartsWith('|')).ToArray();
        Assert.Equal(result.Cases.Count + 2, tableLines.Length);
        Assert.Contains(tableLines, l => l.Length > ConsoleProgress.CompactWidth);
    }

    private static (string Output, ConsoleProgress Progress) Render(ScenarioResult result, bool wide)
    {
        var writer = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings { Ansi = AnsiSupport.No, ColorSystem = ColorSystemSupport.NoColors, Out = new AnsiConsoleOutput(writer) });
        console.Profile.Width = 10_000;
        var progress = new ConsoleProgress(console, interactive: false) { Wide = wide };
        progress.ScenarioFinished(result);
        return (writer.ToString(), progress);
    }

    /// <summary>The scenario's real cases, each with figures as wide as a real run prints (seconds, thousands, several failure kinds).</summary>
    private static ScenarioResult Result(Scenario scenario, string kind)
    {
        var cases = scenario.Cases(ScenarioSize.Default).Select(labCase =>
        {
            var workload = labCase.CreateWorkload();
            var isFanOut = labCase.Strategy.Name.StartsWith("FanOut", StringComparison.Ordinal);
            return new CaseResult
            {
                Strategy = labCase.Strategy.Name,
                Workload = workload.Name,
                Parameters = CaseParameters.Of(labCase, workload),
                Runs = 3,
                MeanMs = 12_345.678,
                ErrorMs = 1_234.5,
                StdDevMs = 999.9,
                MedianMs = 12_000,
                IdealMs = 10_000,
                Efficiency = 0.81,
                PeakInFlight = 2000,
                ThreadPoolThreadsPeak = 380,
                AllocatedBytes = 123_456_789,
                LimitFinal = isFanOut ? 128 : null,
                LimitPeak = isFanOut ? 256 : null,
                SeedSays = labCase.SeedSays,
                Io = kind == "io"
                    ? new IoResult
                    {
                        Successes = 1_872,
                        Failures = 1_128,
                        FailuresByStatus = new Dictionary<string, double> { ["429"] = 1_000, ["503"] = 100 },
                        FailuresSocket = 20,
                        FailuresTimeout = 8,
                        SuccessesPerSecond = 2_217,
                        PeakConcurrentServed = 64,
                        Rejected429 = 1_000,
                        ItemLatencyP50Ms = 23.4,
                        ItemLatencyP95Ms = 80.1,
                        ItemLatencyP99Ms = 1_234.5,
                    }
                    : null,
                Outcome = kind == "outcome"
                    ? new OutcomeResult
                    {
                        ItemsStarted = 100,
                        StartedAfterTrigger = 31,
                        Completed = 95,
                        Failed = 5,
                        Canceled = 49,
                        StopMs = 12.46,
                        RunningAtReturn = 0,
                        FinalState = "Faulted / Canceled",
                        Threw = "ItemFailedException (item 10) / TaskCanceledException",
                        FirstFailedItem = "10 / 30",
                    }
                    : null,
            };
        }).ToArray();
        var verdict = string.Join(' ', Enumerable.Repeat("FanOut's default: FanOut (adaptive) at N=500: 68.4 ms, the fastest row with at most 256 in flight (Task.WhenAll took 20.3 ms with 500 in flight), limit settled at 128 (peak 256).", 3));
        return new ScenarioResult
        {
            Id = scenario.Id,
            Seed = scenario.Seed.File,
            SeedClaim = scenario.Seed.Claim,
            SeedMachine = scenario.Seed.Machine,
            Scale = 1,
            Full = false,
            Verdict = verdict,
            Cases = cases,
        };
    }
}
