namespace FanOut.Tests.Infrastructure;

/// <summary>
/// Items 0..count-1 (or endless) that record how they are enumerated, and fail on demand, as an
/// <see cref="IEnumerable{T}"/> that is not a list and as an <see cref="IAsyncEnumerable{T}"/>.
/// </summary>
public sealed class SourceProbe(int count)
{
    private int _getEnumeratorCalls;
    private int _pulled;
    private int _disposed;

    public int Count { get; } = count;

    public bool Endless { get; init; }

    public bool ThrowOnGetEnumerator { get; init; }

    /// <summary>MoveNext throws when asked for this item (-1: never).</summary>
    public int ThrowOnMoveNextAt { get; init; } = -1;

    public bool ThrowOnDispose { get; init; }

    public int GetEnumeratorCalls => Volatile.Read(ref _getEnumeratorCalls);

    public int Pulled => Volatile.Read(ref _pulled);

    public int Disposed => Volatile.Read(ref _disposed);

    /// <summary>The token the async enumerator was given.</summary>
    public CancellationToken EnumeratorToken { get; private set; }

    public int[] ToArray() => Enumerable.Range(0, Count).ToArray();

    public IEnumerable<int> AsEnumerable() => new SyncSequence(this);

    public IAsyncEnumerable<int> AsAsyncEnumerable() => new AsyncSequence(this);

    /// <summary>A list whose indexer counts as a pull (a custom list's indexer is user code, as a MoveNext is).</summary>
    public IReadOnlyList<int> AsReadOnlyList() => new CountingList(this);

    private bool Next(ref int current)
    {
        var next = current + 1;
        if (next == ThrowOnMoveNextAt)
        {
            throw new InvalidOperationException("MoveNext failed");
        }

        if (!Endless && next >= Count)
        {
            return false;
        }

        current = next;
        Interlocked.Increment(ref _pulled);
        return true;
    }

    private void Dispose()
    {
        Interlocked.Increment(ref _disposed);
        if (ThrowOnDispose)
        {
            throw new InvalidOperationException("Dispose failed");
        }
    }

    private void Started()
    {
        Interlocked.Increment(ref _getEnumeratorCalls);
        if (ThrowOnGetEnumerator)
        {
            throw new InvalidOperationException("GetEnumerator failed");
        }
    }

    private sealed class SyncSequence(SourceProbe probe) : IEnumerable<int>
    {
        public IEnumerator<int> GetEnumerator()
        {
            probe.Started();
            return new Enumerator(probe);
        }

        System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();
    }

    private sealed class Enumerator(SourceProbe probe) : IEnumerator<int>
    {
        private int _current = -1;

        public int Current => _current;

        object System.Collections.IEnumerator.Current => _current;

        public bool MoveNext() => probe.Next(ref _current);

        public void Reset() => throw new NotSupportedException();

        public void Dispose() => probe.Dispose();
    }

    private sealed class AsyncSequence(SourceProbe probe) : IAsyncEnumerable<int>
    {
        public IAsyncEnumerator<int> GetAsyncEnumerator(CancellationToken cancellationToken = default)
        {
            probe.Started();
            probe.EnumeratorToken = cancellationToken;
            return new AsyncEnumerator(probe);
        }
    }

    private sealed class AsyncEnumerator(SourceProbe probe) : IAsyncEnumerator<int>
    {
        private int _current = -1;

        public int Current => _current;

        public async ValueTask<bool> MoveNextAsync()
        {
            await Task.Yield(); // a real async source completes asynchronously
            return probe.Next(ref _current);
        }

        public ValueTask DisposeAsync()
        {
            probe.Dispose();
            return default;
        }
    }

    private sealed class CountingList(SourceProbe probe) : IReadOnlyList<int>
    {
        public int Count => probe.Count;

        public int this[int index]
        {
            get
            {
                Interlocked.Increment(ref probe._pulled);
                return index;
            }
        }

        public IEnumerator<int> GetEnumerator() => throw new NotSupportedException("read by index only");

        System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();
    }
}
