namespace FanOut.Benchmarks.Adaptive;

/// <summary>Items without end under one limit until a deadline: the time-boxed runs of the real-clock measurements.</summary>
internal static class TimeBoxedRun
{
    /// <summary>Runs <paramref name="body"/> on item after item under <paramref name="limit"/> until <paramref name="end"/> is canceled; items that ran out of attempts do not end the run.</summary>
    public static async Task RunAsync(ConcurrencyLimit limit, Func<int, CancellationToken, ValueTask> body, CancellationToken end)
    {
        try
        {
            await Forever().FanOutAsync(body, new FanOutOptions { Limit = limit, Errors = ErrorMode.RunAll }, end);
        }
        catch (Exception e) when (end.IsCancellationRequested && e is OperationCanceledException or FanOutException)
        {
            // The run's end (a FanOutException: some item ran out of attempts before it).
        }
    }

    private static IEnumerable<int> Forever()
    {
        for (var i = 0; ; i++)
        {
            yield return i;
        }
    }
}
