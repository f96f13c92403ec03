using System.Globalization;

using FanOut.Lab.Results;
using FanOut.Lab.Running;
using FanOut.Lab.ServerOverload;

namespace FanOut.Lab.Scenarios;

/// <summary>
/// A service protecting itself (issue 28): a Kestrel app on loopback whose handler calls a backend of 4 at once x 40 ms
/// (a real PostgreSQL behind an Npgsql pool of 4 where one can be started, else the simulated dependency), under open-loop
/// load stepping 0.5x, 1x, 2x, 4x its capacity; rows: no limiter, ASP.NET Core's ConcurrencyLimiter hand-tuned and
/// mistuned, FanOut adaptive, FanOut adaptive with priorities (20% critical, 80% sheddable).
/// </summary>
public sealed class ServerOverloadScenario : Scenario
{
    /// <summary>The load steps, as multiples of capacity.</summary>
    public static IReadOnlyList<double> Loads { get; } = [0.5, 1, 2, 4];

    /// <summary>ASP.NET Core ConcurrencyLimiter's best permit count for this backend, found by trying 2, 4, 6 and 8 at 2x
    /// (<c>bench/FanOut.ServerOverload</c>: 48, 97, 97 and 97 ok/s on PostgreSQL): the pool's size.</summary>
    public const int HandTunedPermits = 4;

    /// <summary>The mistuned count: 8x the hand-tuned one, a guess that ignored the pool.</summary>
    public const int MistunedPermits = 32;

    private static readonly TimeSpan s_warmup = TimeSpan.FromSeconds(0.75);
    private static readonly TimeSpan s_measured = TimeSpan.FromSeconds(1.5);
    private static readonly TimeSpan s_slo = TimeSpan.FromMilliseconds(200);

    /// <summary>One run sweeps the four loads (~9 s), so each row is measured once.</summary>
    private static readonly RunPolicy s_policy = RunPolicy.Once("measured once: one run sweeps four loads in one app, about 9 s") with { MeasuredRun = TimeSpan.FromSeconds(10) };

    /// <summary>The rows, in table order.</summary>
    public static IReadOnlyList<OverloadRow> Rows { get; } =
    [
        OverloadRow.NoLimiter,
        OverloadRow.AspNetConcurrency(HandTunedPermits, "hand-tuned"),
        OverloadRow.AspNetConcurrency(MistunedPermits, "mistuned, 8x"),
        OverloadRow.FanOutAdaptive,
        OverloadRow.FanOutPriorities,
    ];

    /// <inheritdoc/>
    public override string Id => "server-overload";

    /// <inheritdoc/>
    public override string Purpose => "A service protecting itself under 0.5x-4x overload: no limiter, ASP.NET Core's ConcurrencyLimiter, FanOut adaptive with priorities";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "issue 28",
        "Under a burst a service should serve what it can at good latency and refuse the rest at once, least important first, instead of queueing everything until every request times out.",
        "targets: at 2x and 4x goodput >= 0.9x the hand-tuned limiter's and admitted p99 <= 2x the uncontended p99; critical >= 99% ok at 4x; nothing refused at 0.5x");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        var backend = PostgresServer.WhyNot() is { } why ? $"the simulated dependency ({why})" : "PostgreSQL (Npgsql pool)";
        return $"Kestrel on loopback, backend {ServerOverloadWorkload.BackendConcurrency} at once x {ServerOverloadWorkload.ServiceTime.TotalMilliseconds:0} ms on {backend}, open loop at {string.Join(", ", Loads.Select(l => $"{l:0.##}x"))}, {(s_warmup + s_measured).TotalSeconds:0.##} s each";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size) =>
        Rows.Select(row => new LabCase(new ServerOverloadStrategy(row), Sweep, Sweep().Requests, Policy: s_policy)).ToArray();

    private static ServerOverloadWorkload Sweep() => new(Loads, s_warmup, s_measured, s_slo);

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        IReadOnlyList<LoadStepResult>? Steps(OverloadRow row) => measured.Cases.FirstOrDefault(c => c.Succeeded && c.Strategy == row.Name)?.Io?.LoadSteps;
        var none = Steps(Rows[0]);
        var tuned = Steps(Rows[1]);
        var adaptive = Steps(Rows[3]);
        var priorities = Steps(Rows[4]);
        if (none is null || tuned is null || adaptive is null || priorities is null)
        {
            return "Not enough cases finished to compare.";
        }

        static LoadStepResult At(IReadOnlyList<LoadStepResult> steps, double load) => steps.First(s => s.LoadFactor == load);
        var uncontended = At(none, 0.5).P99Ms;
        string Against(IReadOnlyList<LoadStepResult> row, double load)
        {
            var s = At(row, load);
            var t = At(tuned, load);
            var ratio = t.GoodputPerSecond > 0 ? s.GoodputPerSecond / t.GoodputPerSecond : double.NaN;
            var p99 = s.P99Ms is { } p && uncontended is { } u && u > 0 ? $"p99 {p:0} ms = {p / u:0.0}x uncontended" : "no p99";
            return string.Create(CultureInfo.InvariantCulture, $"{load:0.#}x {s.GoodputPerSecond:0}/s ({ratio:0.00}x hand-tuned), {p99}");
        }

        var backend = measured.Cases.FirstOrDefault(c => c.Succeeded)?.Workload is { } w && w.Contains(": ", StringComparison.Ordinal) ? w[(w.IndexOf(": ", StringComparison.Ordinal) + 2)..] : "unknown backend";
        var refusedAtHalf = measured.Cases.Where(c => c.Io?.LoadSteps is not null).Max(c => At(c.Io!.LoadSteps!, 0.5).RefusedShare);
        var critical = At(priorities, 4);
        return string.Create(CultureInfo.InvariantCulture,
            $"On {backend}: uncontended p99 {uncontended:0} ms (no limiter at 0.5x). No limiter at 2x/4x served {At(none, 2).GoodputPerSecond:0}/{At(none, 4).GoodputPerSecond:0} within the {s_slo.TotalMilliseconds:0} ms SLO per second; " +
            $"the hand-tuned ConcurrencyLimiter({HandTunedPermits}) {At(tuned, 2).GoodputPerSecond:0}/{At(tuned, 4).GoodputPerSecond:0}. " +
            $"FanOut adaptive: {Against(adaptive, 2)}; {Against(adaptive, 4)}. With priorities: {Against(priorities, 2)}; {Against(priorities, 4)}; " +
            $"critical ok at 4x {critical.CriticalSuccess:P1} while {1 - critical.SheddableSuccess:P0} of sheddable were refused or failed. Refused at 0.5x, any row: {refusedAtHalf:P1}.");
    }
}
