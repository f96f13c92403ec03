using System.Collections;
using System.Runtime.CompilerServices;

namespace FanOut.Conformance.Tests.Infrastructure;

/// <summary>The shapes a caller hands to FanOut: each takes a different path inside it.</summary>
public enum SourceKind
{
    /// <summary>A <c>T[]</c>.</summary>
    Array,

    /// <summary>A <see cref="List{T}"/> (an <see cref="IList{T}"/>).</summary>
    List,

    /// <summary>A custom <see cref="IReadOnlyList{T}"/> that is not an <see cref="IList{T}"/>, counting its indexer reads.</summary>
    ReadOnlyList,

    /// <summary>A lazy <see cref="IEnumerable{T}"/> produced by a <c>yield</c> iterator.</summary>
    Lazy,

    /// <summary>An <see cref="IAsyncEnumerable{T}"/> produced by an <c>async</c> iterator.</summary>
    Async,
}

/// <summary>
/// Items 0..count-1 (or endless, for enumerated kinds) of one <see cref="SourceKind"/>, recording how FanOut pulls them:
/// how many were handed out, whether the enumerator was created and disposed, which token the async enumerator got. Faults
/// on demand in GetEnumerator, MoveNext, Current, Dispose, Count and the indexer.
/// </summary>
public sealed class ProbeSource
{
    /// <summary>An endless source's count.</summary>
    public const int Endless = -1;

    private int _pulled;
    private int _enumerators;
    private int _disposed;
    private CancellationToken _enumeratorToken;

    public ProbeSource(SourceKind kind, int count)
    {
        if (count == Endless && kind is SourceKind.Array or SourceKind.List)
        {
            throw new ArgumentException("Arrays and lists cannot be endless; use a large count.", nameof(count));
        }

        Kind = kind;
        Count = count;
    }

    public SourceKind Kind { get; }

    /// <summary>
    /// A source the test never expects to finish: endless where the kind allows it, otherwise long enough that a run
    /// which is stopped, canceled or blocked never reaches its end.
    /// </summary>
    /// <param name="kind">The source kind.</param>
    /// <param name="asyncYields">For <see cref="SourceKind.Async"/>: whether MoveNextAsync yields to the pool (false: it completes synchronously).</param>
    public static ProbeSource Long(SourceKind kind, bool asyncYields = true) => kind switch
    {
        SourceKind.Array or SourceKind.List => new ProbeSource(kind, 100_000),
        SourceKind.ReadOnlyList => new ProbeSource(kind, 1_000_000),
        _ => new ProbeSource(kind, Endless) { AsyncYields = asyncYields },
    };

    /// <summary>How many items there are; <see cref="Endless"/> for no end.</summary>
    public int Count { get; }

    /// <summary>True when <see cref="Pulled"/> counts what FanOut took (not for arrays and <see cref="List{T}"/>, read directly).</summary>
    public bool CountsPulls => Kind is SourceKind.ReadOnlyList or SourceKind.Lazy or SourceKind.Async;

    /// <summary>True when the source has an enumerator FanOut must dispose.</summary>
    public bool HasEnumerator => Kind is SourceKind.Lazy or SourceKind.Async;

    /// <summary>GetEnumerator / GetAsyncEnumerator throws this.</summary>
    public Exception? GetEnumeratorThrows { get; init; }

    /// <summary>GetEnumerator / GetAsyncEnumerator returns null.</summary>
    public bool GetEnumeratorReturnsNull { get; init; }

    /// <summary>MoveNext(Async) throws this when asked for item <see cref="FailAt"/>.</summary>
    public Exception? MoveNextThrows { get; init; }

    /// <summary>Current (or the list's indexer) throws this for item <see cref="FailAt"/>.</summary>
    public Exception? CurrentThrows { get; init; }

    /// <summary>The item at which <see cref="MoveNextThrows"/> or <see cref="CurrentThrows"/> fires.</summary>
    public int FailAt { get; init; } = -1;

    /// <summary>Dispose / DisposeAsync throws this.</summary>
    public Exception? DisposeThrows { get; init; }

    /// <summary>The read-only list's Count throws this.</summary>
    public Exception? CountThrows { get; init; }

    /// <summary>The async enumerator yields to the pool before each item.</summary>
    public bool AsyncYields { get; init; } = true;

    /// <summary>Registered on the async enumerator's token when it is created (to test callbacks that throw).</summary>
    public Action? OnEnumeratorTokenCanceled { get; init; }

    /// <summary>Items handed out: MoveNext(Async) that returned true, or indexer reads.</summary>
    public int Pulled => Volatile.Read(ref _pulled);

    /// <summary>How many enumerators were requested (GetEnumerator calls).</summary>
    public int EnumeratorsCreated => Volatile.Read(ref _enumerators);

    /// <summary>How many times the enumerator was disposed.</summary>
    public int Disposed => Volatile.Read(ref _disposed);

    /// <summary>The token the async enumerator got.</summary>
    public CancellationToken EnumeratorToken => _enumeratorToken;

    /// <summary>The source as an <see cref="IEnumerable{T}"/>; null for <see cref="SourceKind.Async"/>.</summary>
    public IEnumerable<int>? Enumerable => Kind switch
    {
        SourceKind.Array => System.Linq.Enumerable.Range(0, Count).ToArray(),
        SourceKind.List => System.Linq.Enumerable.Range(0, Count).ToList(),
        SourceKind.ReadOnlyList => new CountingList(this),
        SourceKind.Lazy => new LazySequence(this),
        _ => null,
    };

    /// <summary>The source as an <see cref="IAsyncEnumerable{T}"/>; null unless <see cref="SourceKind.Async"/>.</summary>
    public IAsyncEnumerable<int>? AsyncEnumerable => Kind == SourceKind.Async ? new AsyncSequence(this) : null;

    public override string ToString() => $"{Kind}({(Count == Endless ? "endless" : Count)})";

    private bool HasItem(int index) => Count == Endless || index < Count;

    private void CountPull() => Interlocked.Increment(ref _pulled);

    private void Created() => Interlocked.Increment(ref _enumerators);

    private void MarkDisposed() => Interlocked.Increment(ref _disposed);

    private sealed class CountingList(ProbeSource probe) : IReadOnlyList<int>
    {
        public int Count => probe.CountThrows is { } e ? throw e : probe.Count;

        public int this[int index]
        {
            get
            {
                if (index == probe.FailAt && probe.CurrentThrows is { } e)
                {
                    throw e;
                }

                probe.CountPull();
                return index;
            }
        }

        public IEnumerator<int> GetEnumerator()
        {
            for (var i = 0; i < Count; i++)
            {
                yield return this[i];
            }
        }

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }

    /// <summary>A <c>yield</c> iterator behind an enumerator that counts and faults on demand.</summary>
    private sealed class LazySequence(ProbeSource probe) : IEnumerable<int>
    {
        public IEnumerator<int> GetEnumerator()
        {
            probe.Created();
            if (probe.GetEnumeratorThrows is { } e)
            {
                throw e;
            }

            return probe.GetEnumeratorReturnsNull ? null! : new ProbeEnumerator(probe, Iterate(probe));
        }

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

        private static IEnumerable<int> Iterate(ProbeSource probe)
        {
            for (var i = 0; probe.HasItem(i); i++)
            {
                yield return i;
            }
        }
    }

    private sealed class ProbeEnumerator(ProbeSource probe, IEnumerable<int> items) : IEnumerator<int>
    {
        private readonly IEnumerator<int> _inner = items.GetEnumerator();
        private int _index = -1;

        public int Current => _index == probe.FailAt && probe.CurrentThrows is { } e ? throw e : _inner.Current;

        object IEnumerator.Current => Current;

        public bool MoveNext()
        {
            if (_index + 1 == probe.FailAt && probe.MoveNextThrows is { } e)
            {
                throw e;
            }

            if (!_inner.MoveNext())
            {
                return false;
            }

            _index++;
            probe.CountPull();
            return true;
        }

        public void Dispose()
        {
            probe.MarkDisposed();
            _inner.Dispose();
            if (probe.DisposeThrows is { } e)
            {
                throw e;
            }
        }

        public void Reset() => throw new NotSupportedException();
    }

    private sealed class AsyncSequence(ProbeSource probe) : IAsyncEnumerable<int>
    {
        public IAsyncEnumerator<int> GetAsyncEnumerator(CancellationToken cancellationToken = default)
        {
            probe.Created();
            probe._enumeratorToken = cancellationToken;
            if (probe.GetEnumeratorThrows is { } e)
            {
                throw e;
            }

            if (probe.GetEnumeratorReturnsNull)
            {
                return null!;
            }

            if (probe.OnEnumeratorTokenCanceled is { } callback)
            {
                cancellationToken.Register(callback);
            }

            return new ProbeAsyncEnumerator(probe, Iterate(probe, cancellationToken));
        }

        private static async IAsyncEnumerable<int> Iterate(ProbeSource probe, [EnumeratorCancellation] CancellationToken cancellationToken)
        {
            for (var i = 0; probe.HasItem(i); i++)
            {
                if (probe.AsyncYields)
                {
                    await Task.Yield();
                }

                yield return i;
            }
        }
    }

    private sealed class ProbeAsyncEnumerator(ProbeSource probe, IAsyncEnumerable<int> items) : IAsyncEnumerator<int>
    {
        private readonly IAsyncEnumerator<int> _inner = items.GetAsyncEnumerator();
        private int _index = -1;

        public int Current => _index == probe.FailAt && probe.CurrentThrows is { } e ? throw e : _inner.Current;

        public async ValueTask<bool> MoveNextAsync()
        {
            if (!await _inner.MoveNextAsync())
            {
                return false;
            }

            if (_index + 1 == probe.FailAt && probe.MoveNextThrows is { } e)
            {
                throw e;
            }

            _index++;
            probe.CountPull();
            return true;
        }

        public async ValueTask DisposeAsync()
        {
            probe.MarkDisposed();
            await _inner.DisposeAsync();
            if (probe.DisposeThrows is { } e)
            {
                throw e;
            }
        }
    }
}
