using System.Diagnostics;
using System.Globalization;

using FanOut.FaultInjection;

namespace FanOut.Benchmarks.Soak;

/// <summary>
/// <c>soak --minutes N [--seed S]</c>: runs the fault-injection generator of the test suite for as long as asked and
/// prints trials, calls (cases) and violations; every violating seed is printed so it replays. Exit code 1 on any violation.
/// </summary>
public static class SoakCommand
{
    private const double DefaultMinutes = 1;
    private static readonly TimeSpan s_progressEvery = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan s_trialTimeout = TimeSpan.FromSeconds(60);

    public static async Task<int> RunAsync(string[] args)
    {
        var minutes = DefaultMinutes;
        var seed = Environment.TickCount & int.MaxValue;
        for (var i = 1; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--minutes" when i + 1 < args.Length && double.TryParse(args[i + 1], CultureInfo.InvariantCulture, out var m) && m > 0:
                    minutes = m;
                    i++;
                    break;
                case "--seed" when i + 1 < args.Length && int.TryParse(args[i + 1], CultureInfo.InvariantCulture, out var s) && s >= 0:
                    seed = s;
                    i++;
                    break;
                default:
                    await Console.Error.WriteLineAsync($"soak: unknown or bad argument '{args[i]}'; valid: --minutes N (N > 0), --seed S (S >= 0)");
                    return 2;
            }
        }

        Console.WriteLine($"soak: {minutes} min from seed {seed} (replay one trial with --seed S --minutes 0.01)");
        var clock = Stopwatch.StartNew();
        var nextReport = s_progressEvery;
        long trials = 0, cases = 0, violations = 0;
        var unobservedBefore = FaultTrialRunner.UnobservedExceptions;
        while (clock.Elapsed < TimeSpan.FromMinutes(minutes))
        {
            var trial = FaultGenerator.Generate(seed++);
            var found = await FaultTrialRunner.RunAsync(trial).WaitAsync(s_trialTimeout);
            trials++;
            cases += trial.Cases.Count;
            if (found.Count > 0)
            {
                violations += found.Count;
                Console.WriteLine($"VIOLATION {trial}{Environment.NewLine}  {string.Join(Environment.NewLine + "  ", found)}");
            }

            if (clock.Elapsed >= nextReport)
            {
                Console.WriteLine($"  {clock.Elapsed:mm\\:ss}  trials {trials:N0}  cases {cases:N0}  violations {violations}");
                nextReport += s_progressEvery;
            }
        }

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        var unobserved = FaultTrialRunner.UnobservedExceptions - unobservedBefore;
        Console.WriteLine($"soak: {clock.Elapsed:mm\\:ss}, trials {trials:N0}, cases {cases:N0}, violations {violations}, unobserved task exceptions {unobserved}");
        return violations == 0 && unobserved == 0 ? 0 : 1;
    }
}
