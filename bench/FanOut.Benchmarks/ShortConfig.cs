using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Diagnosers;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Jobs;

namespace FanOut.Benchmarks;

/// <summary>
/// The default config (loggers, columns) with one short job: a few iterations, so the suite takes minutes, not an hour, on
/// a 2-core machine. Memory diagnoser for allocations, GitHub markdown for the committed results.
/// </summary>
public sealed class ShortConfig : ManualConfig
{
    public ShortConfig()
    {
        Add(DefaultConfig.Instance);
        AddJob(Job.ShortRun.WithWarmupCount(2).WithIterationCount(5).WithLaunchCount(1));
        AddDiagnoser(MemoryDiagnoser.Default);
        AddExporter(MarkdownExporter.GitHub);
        WithOptions(ConfigOptions.JoinSummary);
    }
}
