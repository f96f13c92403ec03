namespace FanOut.Sources;

/// <summary>
/// Claims items of an <see cref="IAsyncEnumerable{T}"/>: one MoveNextAsync at a time, behind an asynchronous gate so that a
/// worker waiting for its turn holds no thread. The enumerator gets the run's token (canceled with the caller's token or on a FailFast failure).
/// </summary>
internal sealed class AsyncEnumerableSource<T>(IAsyncEnumerable<T> source) : ItemSource<T>
{
    private readonly SemaphoreSlim _gate = new(1, 1);
    private IAsyncEnumerator<T>? _enumerator;
    private long _claimed;
    private bool _done;

    public override long ClaimedCount => Volatile.Read(ref _claimed);

    public override async ValueTask<bool> TryClaimAsync(WorkerSlot<T> slot, CancellationToken cancellationToken)
    {
        try
        {
            await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }

        try
        {
            if (_done)
            {
                return false;
            }

            try
            {
                _enumerator ??= source.GetAsyncEnumerator(cancellationToken)
                    ?? throw new InvalidOperationException("The source's GetAsyncEnumerator() returned null.");
                if (!await _enumerator.MoveNextAsync().ConfigureAwait(false))
                {
                    _done = true;
                    return false;
                }

                if (_claimed >= MaxCount)
                {
                    throw TooManyItems();
                }

                slot.Item = _enumerator.Current;
            }
            catch
            {
                _done = true;
                throw;
            }

            slot.Index = _claimed;
            Volatile.Write(ref _claimed, _claimed + 1);
            return true;
        }
        finally
        {
            _gate.Release();
        }
    }

    public override async ValueTask DisposeAsync()
    {
        // Every worker has stopped (none is inside the gate), so the gate and the enumerator are ours alone now.
        if (_enumerator is not null)
        {
            await _enumerator.DisposeAsync().ConfigureAwait(false);
        }

        _gate.Dispose();
    }
}
