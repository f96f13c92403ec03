using FanOut.Downstream;
using FanOut.Lab.Results;
using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Scenarios;

/// <summary>Seed 000's Parallel.ForEachAsync example for real: ids from SQLite, <c>GET /price/{id}</c>, the price written back; where the single SQLite writer becomes the limit.</summary>
public sealed class PriceSyncScenario : Scenario
{
    private const int Items = 1000;
    private const int Capacity = 200;
    private const int Queue = 1000;

    /// <inheritdoc/>
    public override string Id => "price-sync";

    /// <inheritdoc/>
    public override string Purpose => "A price sync: GET a price, write it to SQLite, where the one database writer is the limit";

    /// <inheritdoc/>
    public override SeedReference Seed { get; } = new(
        "000_501b81ed9e953635.txt",
        "Parallel.ForEachAsync with MaxDegreeOfParallelism = 20 over ids from the database: GetFromJsonAsync(\"/price/{id}\") then SavePriceAsync, which \"never blocks a pool thread\". Seed 002 warns that a burst suits no upstream with \"contention for some resource (e.g. write lock in the DB)\".",
        "code only, no numbers");

    /// <inheritdoc/>
    public override string Describe(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        return $"{DownstreamCases.Items(size, Items, 200)} products: GET /price ({DownstreamCases.Describe(Server(size))}) + SQLite UPDATE";
    }

    /// <inheritdoc/>
    public override IReadOnlyList<LabCase> Cases(ScenarioSize size)
    {
        ArgumentNullException.ThrowIfNull(size);
        var items = DownstreamCases.Items(size, Items, 200);
        var server = Server(size);
        Workload Sync() => new PriceSyncWorkload(server, DownstreamCases.CallTimeout, items);
        return
        [
            new(new ParallelForEachAsyncStrategy(), Sync, items, Policy: DownstreamCases.Once),
            new(new ParallelForEachAsyncStrategy(16), Sync, items, Policy: DownstreamCases.Quick),
            new(new WhenAllStrategy(), Sync, items, Policy: DownstreamCases.Quick),
        ];
    }

    private static DownstreamOptions Server(ScenarioSize size) => DownstreamCases.Server(size, Capacity, Queue, 10, 40);

    /// <inheritdoc/>
    public override string Verdict(ScenarioResult measured)
    {
        ArgumentNullException.ThrowIfNull(measured);
        var byDefault = Find.Case(measured, "Parallel.ForEachAsync (default)");
        var dop16 = Find.Case(measured, "Parallel.ForEachAsync (DOP 16)");
        var whenAll = Find.Case(measured, "Task.WhenAll");
        if (byDefault?.Io is null || dop16?.Io is null || whenAll?.Io is null)
        {
            return "Not enough cases finished to compare with the seed.";
        }

        static string PerWrite(CaseResult c) => Find.Ms((c.Io!.WriteWaitMs ?? 0) / Math.Max(1, c.Io.Successes));
        static string Share(CaseResult c) => $"{(c.Io!.WriteWaitMs ?? 0) / Math.Max(1e-9, c.MeanMs):N1}x";
        return $"The default DOP took {Find.Ms(byDefault.MeanMs)} ({DownstreamCases.Rate(byDefault)}), DOP 16 {Find.Ms(dop16.MeanMs)} ({DownstreamCases.Rate(dop16)}), WhenAll {Find.Ms(whenAll.MeanMs)} ({DownstreamCases.Rate(whenAll)}, {whenAll.ThreadPoolThreadsPeak:N0} pool threads at peak). " +
            $"Time inside the SQLite writes, summed over items, per run: default {Share(byDefault)} the run time ({PerWrite(byDefault)} per write), DOP 16 {Share(dop16)} ({PerWrite(dop16)}), WhenAll {Share(whenAll)} ({PerWrite(whenAll)}): " +
            "above 1x, items were queued behind SQLite's single writer, the contention seed 002 warns of. It shows as wait, not errors, because Microsoft.Data.Sqlite retries a locked database inside the call, " +
            "and its \"async\" save runs synchronously, holding a pool thread all the while.";
    }
}
