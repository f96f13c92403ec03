using System.Runtime.CompilerServices;
using System.Threading.Tasks.Sources;

namespace FanOut.Execution;

/// <summary>Where a body's result goes once it is known: the results array, or a stream worker's holder.</summary>
internal interface IResultSink<TResult>
{
    void Store(long index, TResult value);
}

/// <summary>
/// One worker's reusable bridge from a pending body (<see cref="ValueTask{TResult}"/>) to the worker loop (a plain
/// <see cref="ValueTask"/>): stores the result where it belongs, then resumes the worker. It replaces an async method per
/// item (a state machine frame, pooled or not) with a continuation on the body's own awaiter, so a pending body costs the
/// worker no allocation and one hop less.
/// </summary>
/// <remarks>
/// Touched by its own worker only: <see cref="Track"/> is called after the previous item's result was consumed, and the
/// body's continuation runs once per item. Continuations run synchronously on the thread that completed the body, as they
/// would if the worker awaited the body itself.
/// </remarks>
internal sealed class ResultCompletion<TResult> : IValueTaskSource
{
    private readonly IResultSink<TResult> _sink;
    private readonly Action _onBodyCompleted;
    private ManualResetValueTaskSourceCore<bool> _core;
    private ConfiguredValueTaskAwaitable<TResult>.ConfiguredValueTaskAwaiter _body;
    private long _index;

    public ResultCompletion(IResultSink<TResult> sink)
    {
        _sink = sink;
        _onBodyCompleted = OnBodyCompleted;
    }

    /// <summary>Returns a task that completes when <paramref name="pending"/> has, with its result stored for <paramref name="index"/>.</summary>
    public ValueTask Track(ValueTask<TResult> pending, long index)
    {
        _core.Reset();
        _index = index;
        _body = pending.ConfigureAwait(false).GetAwaiter();
        _body.UnsafeOnCompleted(_onBodyCompleted);
        return new ValueTask(this, _core.Version);
    }

    public void GetResult(short token) => _core.GetResult(token);

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);

    private void OnBodyCompleted()
    {
        var body = _body;
        _body = default; // keep nothing of the finished body alive while the worker waits for its next item
        try
        {
            _sink.Store(_index, body.GetResult());
        }
        catch (Exception e)
        {
            _core.SetException(e);
            return;
        }

        _core.SetResult(true);
    }
}
