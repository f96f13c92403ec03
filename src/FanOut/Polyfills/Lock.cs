#if !NET9_0_OR_GREATER
namespace System.Threading;

/// <summary>net8.0 stand-in for .NET 9's <c>System.Threading.Lock</c>: the same members FanOut uses, over <see cref="Monitor"/>.</summary>
/// <remarks>
/// The C# compiler lowers <c>lock (x)</c> on a type named <c>System.Threading.Lock</c> to <c>using (x.EnterScope())</c>, so this
/// type supplies <see cref="EnterScope"/> and its <see cref="Scope"/>. Internal; FanOut.Redis compiles this same file (linked)
/// so one source builds for net8.0 and net10.0; on net9.0 and later the runtime's type is used.
/// </remarks>
internal sealed class Lock
{
    // Monitor on a plain object: passing the Lock itself would be the conversion CS9216 warns about.
    private readonly object _monitor = new();

    /// <summary>Whether the calling thread holds this lock.</summary>
    public bool IsHeldByCurrentThread => Monitor.IsEntered(_monitor);

    /// <summary>Enters the lock; the returned scope exits it when disposed.</summary>
    public Scope EnterScope()
    {
        Monitor.Enter(_monitor);
        return new Scope(_monitor);
    }

    /// <summary>Enters the lock.</summary>
    public void Enter() => Monitor.Enter(_monitor);

    /// <summary>Exits the lock.</summary>
    public void Exit() => Monitor.Exit(_monitor);

    /// <summary>A held lock; disposing it exits the lock.</summary>
    public ref struct Scope
    {
        private readonly object _monitor;

        internal Scope(object monitor) => _monitor = monitor;

        /// <summary>Exits the lock.</summary>
        public readonly void Dispose() => Monitor.Exit(_monitor);
    }
}
#endif
