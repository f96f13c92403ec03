namespace FanOut.Lab.Workloads;

/// <summary>Where CPU loops leave their result, so the JIT cannot prove the loop dead and delete it.</summary>
internal static class CpuSink
{
    private static long s_sum;
    private static double s_pow;

    /// <summary>Keeps an integer result alive.</summary>
    public static void Keep(long value) => Volatile.Write(ref s_sum, value);

    /// <summary>Keeps a floating-point result alive.</summary>
    public static void Keep(double value) => Volatile.Write(ref s_pow, value);
}
