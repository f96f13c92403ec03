using System.Globalization;

namespace FanOut.Lab.Strategies;

/// <summary>Names the lab's adaptive limits apart (<c>AdaptiveLimitOptions.Name</c>): the "FanOut" event source is
/// process-wide, and a run's timeline keeps only the changes of its own limit.</summary>
public static class LimitNames
{
    /// <summary>What every name the lab gives starts with.</summary>
    public const string Prefix = "fanout-lab-";

    private static long s_next;

    /// <summary>A name no other limit of this process has: <c>fanout-lab-1</c>, <c>fanout-lab-2</c>, ...</summary>
    public static string Next() => Prefix + Interlocked.Increment(ref s_next).ToString(CultureInfo.InvariantCulture);
}
