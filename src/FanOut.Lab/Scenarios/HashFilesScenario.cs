using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 000's Parallel.ForEach example for real: SHA-256 of N generated files, sequential against Parallel.ForEach and ForEachAsync.</summary>
public sealed class HashFilesScenario : Scenario
{
    private const int Items = 200;
    private const int FileBytes = 1024 * 1024;

    /// <inheritdoc/>
    public override string Id => "hash-files";

    /// <inheritdoc/>
    public override string Purpose => "Files: read and SHA-256 hash each, disk and CPU together";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Use Parallel.ForEach when the work is CPU-bound and the data is already in memory: hashing 100,000 files (SHA256.HashData(stream), \"CPU + sync I/O, no await\").",
        "code only, no numbers");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{Items} files x {size.Work(FileBytes):N0} bytes, SHA-256 each";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var bytes = size.Work(FileBytes);
        Workload Hash() => new HashFilesWorkload(Items, bytes);
        return
        [
            new(new SynchronousLoopStrategy(), Hash, Items, Policy: DownstreamCases.Quick),
            new(new ParallelForEachStrategy(), Hash, Items, "the seed's choice (it sets DOP = ProcessorCount)", DownstreamCases.Quick),
            new(new ParallelForEachAsyncStrategy(), Hash, Items, Policy: DownstreamCases.Quick),
            new(new WhenAllStrategy(), Hash, Items, Policy: DownstreamCases.Quick),
        ];
    }

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var sequential = Find.Case(measured, "Synchronous loop");
        var forEach = Find.Case(measured, "Parallel.ForEach (default)");
        var forEachAsync = Find.Case(measured, "Parallel.ForEachAsync (default)");
        if (sequential?.Io is null || forEach?.Io is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        var verdict = $"Agrees: hashing is CPU work once the files are cached; Parallel.ForEach took {Find.Ms(forEach.MeanMs)} against {Find.Ms(sequential.MeanMs)} sequentially " +
            $"({sequential.MeanMs / forEach.MeanMs:N1}x on {Environment.ProcessorCount} cores, {Find.Ms(forEach.CpuTimeMs)} of CPU, {forEach.ThreadPoolThreadsPeak:N0} pool threads at peak).";
        if (forEachAsync?.Io is not null)
        {
            verdict += $" The async form under ForEachAsync took {Find.Ms(forEachAsync.MeanMs)}: async file reads buy nothing when the work is hashing.";
        }

        return verdict;
    }
}
