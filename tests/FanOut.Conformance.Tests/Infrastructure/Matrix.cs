namespace FanOut.Conformance.Tests.Infrastructure;

/// <summary>The theory data: every API crossed with every source kind, and the subsets some promises apply to.</summary>
public static class Matrix
{
    public static readonly Api[] AllApis = Enum.GetValues<Api>();

    /// <summary>The APIs whose call fails when a body fails (FanOutOutcomes yields a failure as an outcome instead).</summary>
    public static readonly Api[] FailingApis = [Api.Actions, Api.Results, Api.Stream, Api.OrderedStream];

    public static readonly Api[] TaskApis = [Api.Actions, Api.Results];

    public static readonly Api[] StreamApis = [Api.Stream, Api.OrderedStream, Api.Outcomes];

    public static readonly SourceKind[] AllSources = Enum.GetValues<SourceKind>();

    /// <summary>The kinds whose pulls are observable (not a plain array or <see cref="List{T}"/>).</summary>
    public static readonly SourceKind[] CountingSources = [SourceKind.ReadOnlyList, SourceKind.Lazy, SourceKind.Async];

    /// <summary>The kinds that have an enumerator to dispose.</summary>
    public static readonly SourceKind[] EnumeratedSources = [SourceKind.Lazy, SourceKind.Async];

    public static TheoryData<Api, SourceKind> Everything => Cross(AllApis, AllSources);

    public static TheoryData<Api, SourceKind> Failing => Cross(FailingApis, AllSources);

    public static TheoryData<Api, SourceKind> TaskCalls => Cross(TaskApis, AllSources);

    public static TheoryData<Api, SourceKind> Streams => Cross(StreamApis, AllSources);

    public static TheoryData<Api, SourceKind> Counting => Cross(AllApis, CountingSources);

    public static TheoryData<Api, SourceKind> FailingCounting => Cross(FailingApis, CountingSources);

    public static TheoryData<Api, SourceKind> Enumerated => Cross(AllApis, EnumeratedSources);

    public static TheoryData<Api, SourceKind> Cross(Api[] apis, SourceKind[] kinds)
    {
        var data = new TheoryData<Api, SourceKind>();
        foreach (var api in apis)
        {
            foreach (var kind in kinds)
            {
                data.Add(api, kind);
            }
        }

        return data;
    }

    public static TheoryData<Api, SourceKind, int> Cross(Api[] apis, SourceKind[] kinds, int[] values)
    {
        var data = new TheoryData<Api, SourceKind, int>();
        foreach (var api in apis)
        {
            foreach (var kind in kinds)
            {
                foreach (var value in values)
                {
                    data.Add(api, kind, value);
                }
            }
        }

        return data;
    }
}
