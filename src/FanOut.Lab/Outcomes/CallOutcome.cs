using FanOut.Lab.Workloads;

namespace FanOut.Lab.Outcomes;

/// <summary>What a fan-out call gave its caller: what <c>await</c> threw, what its task holds, and its final state.</summary>
/// <param name="FinalState">The call's final state: <c>RanToCompletion</c>, <c>Faulted</c> or <c>Canceled</c>.</param>
/// <param name="Threw">The type name of what the call threw to its caller (<c>await</c>, or a synchronous API's throw), or <c>nothing</c>.</param>
/// <param name="ThrewItem">The item named by what was thrown, when that is an <see cref="ItemFailedException"/>; null otherwise.</param>
/// <param name="ExceptionsReachable">Distinct exceptions the caller can reach: the thrown one, its inner exceptions, and the task's <see cref="Task.Exception"/>, flattened.</param>
/// <param name="CancellationsReachable">How many of those are <see cref="OperationCanceledException"/>s (items the API cancelled after the failure).</param>
/// <param name="FailuresReachable">Distinct failed items among the reachable exceptions.</param>
/// <param name="FailuresIndexedByApi">Failures the API itself ties to their item's index (a <see cref="FanOutException"/>'s <see cref="FanOutFailure.Index"/>).</param>
public sealed record CallOutcome(string FinalState, string Threw, int? ThrewItem, int ExceptionsReachable, int CancellationsReachable, int FailuresReachable, int FailuresIndexedByApi)
{
    /// <summary>The text for a call that threw nothing.</summary>
    public const string Nothing = "nothing";

    /// <summary>Reads the outcome of a call that threw <paramref name="thrown"/> (or nothing), whose task (null for a synchronous API) is <paramref name="task"/>.</summary>
    public static CallOutcome Of(Exception? thrown, Task? task)
    {
        var reachable = new List<Exception>();
        AddLeaves(reachable, thrown);
        if (task is { IsFaulted: true, Exception: { } held })
        {
            AddLeaves(reachable, held);
        }

        var indexed = new HashSet<int>();
        AddIndexed(indexed, thrown);
        if (task is { IsFaulted: true, Exception: { } taskException })
        {
            AddIndexed(indexed, taskException);
        }

        var failures = reachable.OfType<ItemFailedException>().Select(e => e.Item).ToHashSet();
        return new CallOutcome(
            StateOf(thrown, task),
            thrown?.GetType().Name ?? Nothing,
            (thrown as ItemFailedException)?.Item,
            reachable.Count,
            reachable.Count(e => e is OperationCanceledException),
            failures.Count,
            indexed.Count);
    }

    private static string StateOf(Exception? thrown, Task? task) => task is { IsCompleted: true }
        ? task.Status.ToString()
        : thrown switch
        {
            null => nameof(TaskStatus.RanToCompletion),
            OperationCanceledException => nameof(TaskStatus.Canceled),
            _ => nameof(TaskStatus.Faulted),
        };

    /// <summary>Adds the exception and, for aggregates, every exception inside it, each once (by reference).</summary>
    private static void AddLeaves(List<Exception> into, Exception? exception)
    {
        if (exception is null)
        {
            return;
        }

        if (exception is AggregateException aggregate)
        {
            foreach (var inner in aggregate.InnerExceptions)
            {
                AddLeaves(into, inner);
            }

            return;
        }

        if (!into.Contains(exception))
        {
            into.Add(exception);
        }
    }

    /// <summary>Adds the items whose failure a <see cref="FanOutException"/> lists under the item's own index.</summary>
    private static void AddIndexed(HashSet<int> into, Exception? exception)
    {
        switch (exception)
        {
            case FanOutException fanOut:
                foreach (var failure in fanOut.Failures)
                {
                    if (failure.Exception is ItemFailedException failed && failed.Item == failure.Index)
                    {
                        into.Add((int)failure.Index); // the lab's items are int-indexed
                    }
                }

                break;
            case AggregateException aggregate:
                foreach (var inner in aggregate.InnerExceptions)
                {
                    AddIndexed(into, inner);
                }

                break;
        }
    }
}
