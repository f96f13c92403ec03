using BenchmarkDotNet.Running;

using FanOut.Benchmarks.Adaptive;
using FanOut.Benchmarks.Costs;
using FanOut.Benchmarks.Fleet;
using FanOut.Benchmarks.Overload;
using FanOut.Benchmarks.Soak;
using FanOut.Benchmarks.Tracing;

namespace FanOut.Benchmarks;

/// <summary>
/// <c>dotnet run -c Release --project bench/FanOut.Benchmarks -- --filter '*'</c> runs the BenchmarkDotNet suite;
/// <c>-- adaptive [results-dir] [svg-path]</c> runs the adaptive-limit measurement program instead;
/// <c>-- soak --minutes N [--seed S]</c> runs the fault-injection generator for N minutes;
/// <c>-- redis-soak --minutes N [--sentinel] [--replica-acks N] [--faults K,K] [--workers W] [--budget B] [--lease-ms L] [--fallback F] [--seed S]</c> worker processes sharing a Redis budget under random Redis faults;
/// <c>-- overload [results-dir]</c> runs FanOut's default against rejecting and rate-limited downstreams;
/// <c>-- redis-wait-cost [--rounds R] [--per-round N]</c> the round-trip cost of the Redis limit's WAIT for a replica, alternating rounds;
/// <c>-- fleet-rate [--workers N] [--rate R] [--burst B] [--seconds S] [--faults restart,pause]</c> N processes on one Redis fleet rate, the rate held by the server's clock;
/// <c>-- fleet-incidents [--processes P] [--rounds R] [--initial B] [--scenarios S,S]</c> the simulation suite's scenarios against P processes sharing one adaptive Redis budget, in real time;
/// <c>-- fleet-scale [--workers N] [--budget B | --adaptive] [--items I] [--hold-ms MS | --url URL] [--rounds R]</c> the Redis limit's coordination cost per item with N processes;
/// <c>-- fast-start [rounds] [results-dir]</c> the adaptive default against Fixed, Parallel.ForEachAsync and Task.WhenAll;
/// <c>-- costs [rounds] [results-dir]</c> bytes per call, asynchronous bodies and streams against Parallel.ForEachAsync and hand-written fan-outs;
/// <c>-- tracing [rounds]</c> the tracing overhead per item, with and without listeners, in alternating rounds;
/// <c>-- noise [rounds] [results-dir]</c> heavy-tailed latency without overload on the real clock: the default and a shared limit against Fixed(256)
/// (FANOUT_LAW=bdp runs every adaptive limit on the staged law on the bandwidth-delay product; FANOUT_LEAVE_OUT=Rule[,Rule]
/// leaves those of its rules out, for the ablation);
/// <c>-- fairness [rounds] [results-dir]</c> independent clients, each with its own default limit, on one hard cap on the real clock;
/// <c>-- shapes [rounds] [results-dir] [shape]</c> a smooth knee, bimodal latency, a slow "no" (taking a place or not), a cap whose 429s carry Retry-After and CPU-bound bodies on the real clock, each against its best fixed limit;
/// <c>-- io-cpu [rounds] [results-dir]</c> I/O then CPU on the real clock: the band and the staged law against Fixed(16) and Fixed(256);
/// <c>-- fresh waits [rounds]</c> / <c>-- fresh http --fanout PATH [rounds] [capacities]</c> first contact, each case in a fresh process.
/// </summary>
public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        AdaptiveLimitOptions.RulesLeftOutByDefault = Enum.Parse<FanOut.Limits.Adaptive.BandwidthDelayRules>(Environment.GetEnvironmentVariable("FANOUT_LEAVE_OUT") ?? "None");
        if (args is ["adaptive", ..])
        {
            var results = args.Length > 1 ? args[1] : Path.Combine("bench", "FanOut.Benchmarks", "results");
            var svg = args.Length > 2 ? args[2] : Path.Combine("docs", "adaptive-limit.svg");
            await AdaptiveMeasurement.RunAsync(results, svg);
            return 0;
        }

        if (args is ["overload", ..])
        {
            await OverloadMeasurement.RunAsync(args.Length > 1 ? args[1] : Path.Combine("bench", "FanOut.Benchmarks", "results"));
            return 0;
        }

        if (args is ["soak", ..])
        {
            return await SoakCommand.RunAsync(args);
        }

        if (args is ["redis-soak", ..])
        {
            return await RedisSoakCommand.RunAsync(args, Console.Out);
        }

        if (args is ["redis-wait-cost", ..])
        {
            return await ReplicaWaitCostCommand.RunAsync(args, Console.Out);
        }

        if (args is ["fleet-rate", ..])
        {
            return await FleetRateCommand.RunAsync(args, Console.Out);
        }

        if (args is ["fleet-incidents", ..])
        {
            return await FleetIncidentsCommand.RunAsync(args, Console.Out);
        }

        if (args is ["fleet-scale", ..])
        {
            return await FleetScaleCommand.RunAsync(args, Console.Out);
        }

        if (args is ["fast-start", ..])
        {
            await FastStartMeasurement.RunAsync(ResultsDirectory(args), Rounds(args, FastStartMeasurement.DefaultRounds));
            return 0;
        }

        if (args is ["costs", ..])
        {
            await CostMeasurement.RunAsync(ResultsDirectory(args), Rounds(args, CostMeasurement.DefaultRounds), args.Length > 3 ? args[3] : null);
            return 0;
        }

        if (args is ["fairness", ..])
        {
            await FairnessMeasurement.RunAsync(ResultsDirectory(args), Rounds(args, FairnessMeasurement.DefaultRounds));
            return 0;
        }

        if (args is ["shapes", ..])
        {
            await ShapesMeasurement.RunAsync(ResultsDirectory(args), Rounds(args, ShapesMeasurement.DefaultRounds), args.Length > 3 ? args[3] : "");
            return 0;
        }

        if (args is ["noise", ..])
        {
            await NoiseMeasurement.RunAsync(ResultsDirectory(args), Rounds(args, NoiseMeasurement.DefaultRounds));
            return 0;
        }

        if (args is ["io-cpu", ..])
        {
            await IoThenCpuMeasurement.RunAsync(ResultsDirectory(args), Rounds(args, IoThenCpuMeasurement.DefaultRounds));
            return 0;
        }

        if (args is ["fresh" or "fresh-case", ..])
        {
            return await FreshProcessMeasurement.RunAsync(args, Console.Out);
        }

        if (args is ["tracing", ..])
        {
            await TracingCostMeasurement.RunAsync(Rounds(args, TracingCostMeasurement.DefaultRounds));
            return 0;
        }

        BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, new ShortConfig());
        return 0;
    }

    /// <summary>The rounds a measurement's second argument asks for, else <paramref name="fallback"/>.</summary>
    private static int Rounds(string[] args, int fallback) => args.Length > 1 ? int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture) : fallback;

    /// <summary>The results folder a measurement's third argument names, else the bench's own.</summary>
    private static string ResultsDirectory(string[] args) => args.Length > 2 ? args[2] : Path.Combine("bench", "FanOut.Benchmarks", "results");
}
