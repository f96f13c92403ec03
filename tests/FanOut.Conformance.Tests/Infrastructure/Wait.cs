using System.Runtime.CompilerServices;

namespace FanOut.Conformance.Tests.Infrastructure;

/// <summary>
/// Bounds on every wait, so that a wrong implementation fails a test instead of hanging the suite. None of them is
/// asserted on: a correct implementation is done in milliseconds.
/// </summary>
public static class Wait
{
    /// <summary>The longest a test waits for something that should happen at once.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    /// <summary>
    /// A pause that gives a wrong implementation the chance to do what it must not (start one more body, pull one more
    /// item) before the test looks. Never a bound that a correct implementation has to meet.
    /// </summary>
    public static Task QuietPeriod() => Task.Delay(100);

    /// <summary>Completes when <paramref name="task"/> completes, however it completes; throws <see cref="TimeoutException"/> after <see cref="Timeout"/>.</summary>
    public static async Task SettleAsync(this Task task)
    {
        try
        {
            await task.WaitAsync(Timeout).ConfigureAwait(false);
        }
        catch (TimeoutException) when (!task.IsCompleted)
        {
            throw new TimeoutException($"The call did not complete within {Timeout.TotalSeconds:N0} s.");
        }
        catch (Exception) when (task.IsCompleted)
        {
            // The outcome is the test's to inspect.
        }
    }

    /// <summary>Awaits <paramref name="task"/>, failing after <see cref="Timeout"/>.</summary>
    public static Task Within(this Task task) => task.WaitAsync(Timeout);

    /// <summary>Awaits <paramref name="task"/>, failing after <see cref="Timeout"/>.</summary>
    public static Task<T> Within<T>(this Task<T> task) => task.WaitAsync(Timeout);

    /// <summary>A gate whose waiters continue on the pool, never inside the code that opens it.</summary>
    public static TaskCompletionSource Gate() => new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Polls <paramref name="condition"/> until it holds or <see cref="Timeout"/> passes; returns whether it held.</summary>
    public static async Task<bool> UntilAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                return false;
            }

            await Task.Delay(5).ConfigureAwait(false);
        }

        return true;
    }

#pragma warning disable CA2255 // A test assembly is no library: it owns its process's thread pool.
    /// <summary>
    /// Tests that block pool threads on purpose (synchronous bodies waiting for each other, as Parallel.ForEachAsync's and
    /// Dataflow's tests do) must not wait for the pool's thread injection on a 2-core machine.
    /// </summary>
    [ModuleInitializer]
    internal static void GrowThreadPool()
    {
        ThreadPool.GetMinThreads(out var workers, out var io);
        ThreadPool.SetMinThreads(Math.Max(workers, 64), io);
    }
#pragma warning restore CA2255
}
