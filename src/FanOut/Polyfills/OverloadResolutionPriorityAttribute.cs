#if !NET9_0_OR_GREATER
namespace System.Runtime.CompilerServices;

/// <summary>
/// The C# 13 compiler's overload tie-breaker, declared for targets whose runtime library predates it (the compiler
/// recognises it by name): FanOut's ValueTask overloads win over its Task overloads where both fit.
/// </summary>
[AttributeUsage(AttributeTargets.Method | AttributeTargets.Constructor | AttributeTargets.Property, AllowMultiple = false, Inherited = false)]
internal sealed class OverloadResolutionPriorityAttribute(int priority) : Attribute
{
    /// <summary>Higher wins among applicable overloads of the same type.</summary>
    public int Priority { get; } = priority;
}
#endif
