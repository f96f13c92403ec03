using BenchmarkDotNet.Running;

namespace FanOut.Lab.Benchmarks;

/// <summary>
/// <c>dotnet run -c Release --project bench/FanOut.Lab.Benchmarks -- --filter '*'</c>: the lab's own measurement cost.
/// A named class, not top-level statements: the lab references the fleet worker, whose top-level <c>Program</c> would clash.
/// </summary>
public static class Program
{
    public static void Main(string[] args) => BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
}
