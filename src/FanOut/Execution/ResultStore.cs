namespace FanOut.Execution;

/// <summary>
/// Results by item index. For a source of known count, one array, returned as is (the only allocation of the call that
/// grows with the item count). For a general enumerable, fixed-size chunks that never move, so workers write without a lock.
/// </summary>
internal sealed class ResultStore<TResult> : IResultSink<TResult>
{
    private const int ChunkShift = 10;
    private const int ChunkSize = 1 << ChunkShift;

    private readonly TResult[]? _array;
    private readonly Lock _growLock = new();

    /// <summary>Chunk directory; replaced (never mutated in place) when it grows, so a reader sees a complete one.</summary>
    private TResult[]?[] _chunks = new TResult[]?[4];

    public ResultStore(int knownCount)
    {
        if (knownCount >= 0)
        {
            _array = knownCount == 0 ? [] : new TResult[knownCount];
        }
    }

    public void Store(long index, TResult value) => Set(index, value);

    public void Set(long index, TResult value)
    {
        if (_array is { } array)
        {
            array[index] = value;
            return;
        }

        var chunks = Volatile.Read(ref _chunks);
        var chunkIndex = (int)(index >> ChunkShift);
        var chunk = chunkIndex < chunks.Length ? Volatile.Read(ref chunks[chunkIndex]) : null;
        (chunk ?? GrowTo(chunkIndex))[(int)(index & (ChunkSize - 1))] = value;
    }

    /// <summary>All results in index order; call once every worker has stopped.</summary>
    public TResult[] ToArray(long count)
    {
        if (_array is { } array)
        {
            return array;
        }

        // The source caps a collecting run at Array.MaxLength items, so the count fits an int here.
        var length = (int)count;
        var result = length == 0 ? [] : new TResult[length];
        for (var start = 0; start < length; start += ChunkSize)
        {
            var chunkIndex = start >> ChunkShift;
            if (chunkIndex < _chunks.Length && _chunks[chunkIndex] is { } chunk)
            {
                Array.Copy(chunk, 0, result, start, Math.Min(ChunkSize, length - start));
            }
        }

        return result;
    }

    private TResult[] GrowTo(int chunkIndex)
    {
        lock (_growLock)
        {
            var chunks = _chunks;
            if (chunkIndex >= chunks.Length)
            {
                var grown = new TResult[]?[Math.Max(chunks.Length * 2, chunkIndex + 1)];
                Array.Copy(chunks, grown, chunks.Length);
                chunks = grown;
                Volatile.Write(ref _chunks, grown);
            }

            if (chunks[chunkIndex] is not { } chunk)
            {
                chunk = new TResult[ChunkSize];
                Volatile.Write(ref chunks[chunkIndex], chunk);
            }

            return chunk;
        }
    }
}
