namespace FanOut.Execution;

/// <summary>A worker's finished item between its body and its publication. Touched only by its own worker.</summary>
internal sealed class OutcomeHolder<TResult> : IResultSink<TResult>
{
    private TResult? _value;
    private Exception? _error;
    private ResultCompletion<TResult>? _completion;

    /// <summary>The worker's bridge for bodies that go asynchronous, made the first time one does.</summary>
    public ResultCompletion<TResult> Completion => _completion ??= new ResultCompletion<TResult>(this);

    public void Store(long index, TResult value) => Set(value);

    public void Set(TResult value)
    {
        _value = value;
        _error = null;
    }

    public void Fail(Exception error)
    {
        _value = default;
        _error = error;
    }

    /// <summary>Puts back an outcome that could not be published without waiting.</summary>
    public void Keep(FanOutOutcome<TResult> outcome)
    {
        _value = outcome.Result;
        _error = outcome.Exception;
    }

    /// <summary>The outcome for <paramref name="index"/>; clears the holder so it keeps nothing alive.</summary>
    public FanOutOutcome<TResult> Take(long index)
    {
        var outcome = new FanOutOutcome<TResult>(index, _value, _error);
        _value = default;
        _error = null;
        return outcome;
    }
}
