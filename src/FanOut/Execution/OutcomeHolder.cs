namespace FanOut.Execution;

/// <summary>A worker's finished item between its body and its publication. Touched only by its own worker.</summary>
internal sealed class OutcomeHolder<TResult>
{
    private TResult? _value;
    private Exception? _error;

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
