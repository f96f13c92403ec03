using System.Collections;

namespace FanOut.FaultInjection;

/// <summary>Items 0..n-1 as a lazy <see cref="IEnumerable{T}"/> and an <see cref="IAsyncEnumerable{T}"/> that record every call and fail on demand.</summary>
public sealed class InstrumentedSource(CaseProbe probe) : IEnumerable<int>, IAsyncEnumerable<int>
{
    private CaseProbe Probe => probe;

    private FaultCase Case => probe.Case;

    public IEnumerator<int> GetEnumerator()
    {
        Enter("GetEnumerator");
        try
        {
            Interlocked.Increment(ref probe.GetEnumeratorCalls);
            return Case.SourceFault == SourceFault.GetEnumerator ? throw Fault("GetEnumerator") : new Enumerator(this);
        }
        finally
        {
            probe.ExitSource();
        }
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    public IAsyncEnumerator<int> GetAsyncEnumerator(CancellationToken cancellationToken = default)
    {
        Enter("GetAsyncEnumerator");
        try
        {
            Interlocked.Increment(ref probe.GetEnumeratorCalls);
            return Case.SourceFault == SourceFault.GetEnumerator ? throw Fault("GetAsyncEnumerator") : new Enumerator(this);
        }
        finally
        {
            probe.ExitSource();
        }
    }

    private void Enter(string what) => probe.EnterSource(what);

    private InjectedException Fault(string where)
    {
        probe.SourceThrew = true;
        return new InjectedException($"source {where}");
    }

    private sealed class Enumerator(InstrumentedSource owner) : IEnumerator<int>, IAsyncEnumerator<int>
    {
        private int _current = -1;
        private bool _disposed;

        public int Current
        {
            get
            {
                owner.Enter("Current");
                try
                {
                    return owner.Case.SourceFault == SourceFault.Current && _current == owner.Case.SourceFaultAt ? throw owner.Fault("Current") : _current;
                }
                finally
                {
                    owner.Probe.ExitSource();
                }
            }
        }

        object IEnumerator.Current => Current;

        public bool MoveNext()
        {
            owner.Enter("MoveNext");
            try
            {
                if (_disposed)
                {
                    owner.Probe.DisposedBeforeLastMoveNext = true;
                }

                if (owner.Case.SourceFault == SourceFault.MoveNext && _current + 1 == owner.Case.SourceFaultAt)
                {
                    throw owner.Fault("MoveNext");
                }

                if (_current + 1 >= owner.Case.ItemCount)
                {
                    return false;
                }

                _current++;
                return true;
            }
            finally
            {
                owner.Probe.ExitSource();
            }
        }

        public async ValueTask<bool> MoveNextAsync()
        {
            if (_current % 4 == 1)
            {
                await Task.Yield(); // some pulls complete asynchronously
            }

            return MoveNext();
        }

        public void Reset() => throw new NotSupportedException();

        public void Dispose()
        {
            owner.Enter("Dispose");
            try
            {
                _disposed = true;
                Interlocked.Increment(ref owner.Probe.Disposals);
                if (owner.Case.SourceFault == SourceFault.Dispose)
                {
                    throw owner.Fault("Dispose");
                }
            }
            finally
            {
                owner.Probe.ExitSource();
            }
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return default;
        }
    }
}
