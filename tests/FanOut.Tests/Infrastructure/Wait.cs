namespace FanOut.Tests.Infrastructure;

/// <summary>Hang guards. A timeout here is a failure (the condition never held), never a measurement.</summary>
public static class Wait
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    public static async Task UntilAsync(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Timed out waiting until {what}.");
            }

            await Task.Delay(1);
        }
    }

    public static async Task<T> WithTimeout<T>(this Task<T> task) => await task.WaitAsync(Timeout);

    public static async Task WithTimeout(this Task task) => await task.WaitAsync(Timeout);

    /// <summary>Awaits a task that must fail; returns it (completed) for inspection.</summary>
    public static async Task<Task> Settled(this Task task)
    {
        await task.WaitAsync(Timeout).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        Assert.True(task.IsCompleted, "The task did not complete in time.");
        return task;
    }

    /// <summary>Turns a task without results into one with <paramref name="results"/>, keeping every exception (await would keep only the first).</summary>
    public static Task<int[]> WithResults(this Task task, int[] results)
    {
        var completion = new TaskCompletionSource<int[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        _ = task.ContinueWith(
            t =>
            {
                if (t.IsCanceled)
                {
                    completion.SetCanceled();
                }
                else if (t.IsFaulted)
                {
                    completion.SetException(t.Exception!.InnerExceptions);
                }
                else
                {
                    completion.SetResult(results);
                }
            },
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
        return completion.Task;
    }
}
