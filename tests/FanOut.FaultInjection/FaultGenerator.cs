namespace FanOut.FaultInjection;

/// <summary>Generates trials from a seed: the same seed always gives the same trial.</summary>
public static class FaultGenerator
{
    private const int MaxItems = 64;
    private const int MaxCalls = 3;
    private const double NoBodyFaultShare = 0.4;
    private const double SourceFaultShare = 0.2;
    private const double CancelShare = 0.15;
    private const double BreakShare = 0.3;

    private static readonly BodyBehavior[] s_healthy =
        [BodyBehavior.CompleteSynchronously, BodyBehavior.CompleteSynchronously, BodyBehavior.YieldThenComplete,
         BodyBehavior.DelayThenComplete, BodyBehavior.BlockBriefly, BodyBehavior.ThrowCanceledIfCanceled,
         BodyBehavior.NestedLease, BodyBehavior.NestedFanOut];

    private static readonly BodyBehavior[] s_failing =
        [BodyBehavior.ThrowBeforeAwait, BodyBehavior.ThrowAfterAwait, BodyBehavior.ThrowCanceledWithoutCancellation];

    public static FaultTrial Generate(int seed)
    {
        var random = new Random(seed);
        var kind = (LimitKind)random.Next(3);
        var calls = random.Next(1, MaxCalls + 1);
        var cases = new FaultCase[calls];
        for (var c = 0; c < calls; c++)
        {
            cases[c] = GenerateCase(random);
        }

        return new FaultTrial(seed, kind, random.Next(1, 9), cases);
    }

    private static FaultCase GenerateCase(Random random)
    {
        var overload = (Overload)random.Next(5);
        var shape = (SourceShape)random.Next(4);
        var count = random.Next(0, MaxItems + 1);
        var faultRate = random.NextDouble() < NoBodyFaultShare ? 0 : random.NextDouble() * 0.2;
        var bodies = new BodyBehavior[count];
        for (var i = 0; i < count; i++)
        {
            bodies[i] = random.NextDouble() < faultRate
                ? s_failing[random.Next(s_failing.Length)]
                : s_healthy[random.Next(s_healthy.Length)];
        }

        var enumerated = shape is SourceShape.LazyEnumerable or SourceShape.AsyncEnumerable;
        var sourceFault = enumerated && random.NextDouble() < SourceFaultShare ? (SourceFault)random.Next(1, 5) : SourceFault.None;
        var stream = overload is Overload.UnorderedStream or Overload.OrderedStream or Overload.Outcomes;
        return new FaultCase
        {
            Overload = overload,
            Shape = shape,
            Errors = random.Next(2) == 0 ? ErrorMode.FailFast : ErrorMode.RunAll,
            Bodies = bodies,
            SourceFault = sourceFault,
            SourceFaultAt = random.Next(0, count + 1),
            CancelAtItem = count > 0 && random.NextDouble() < CancelShare ? random.Next(count) : -1,
            BreakAfter = stream && random.NextDouble() < BreakShare ? random.Next(0, count + 1) : -1,
        };
    }
}
