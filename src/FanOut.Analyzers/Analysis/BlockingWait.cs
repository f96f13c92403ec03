using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers.Analysis;

/// <summary>Recognises the calls that block a thread until a task completes.</summary>
internal static class BlockingWait
{
    /// <summary>
    /// How the wait reads in source (".Result", ".Wait()", ".GetAwaiter().GetResult()", "Task.WaitAll"), or null
    /// when <paramref name="operation"/> does not block on a task.
    /// </summary>
    public static string? Describe(IOperation operation, KnownSymbols symbols)
    {
        switch (operation)
        {
            case IPropertyReferenceOperation { Property.Name: "Result", Instance: { } instance }
                when symbols.IsTaskLikeWithResult(instance.Type):
                return ".Result";
            case IInvocationOperation invocation:
                return DescribeCall(invocation, symbols);
            default:
                return null;
        }
    }

    private static string? DescribeCall(IInvocationOperation invocation, KnownSymbols symbols)
    {
        var method = invocation.TargetMethod;
        if (method.Name == "Wait" && !method.IsStatic && symbols.IsTaskLike(invocation.Instance?.Type))
        {
            return ".Wait()";
        }

        if (method.Name is "WaitAll" or "WaitAny" && method.IsStatic && KnownSymbols.Is(method.ContainingType, symbols.Task))
        {
            return "Task." + method.Name;
        }

        if (method.Name == "GetResult"
            && invocation.Instance is IInvocationOperation { TargetMethod.Name: "GetAwaiter" } getAwaiter
            && symbols.IsTaskLike(getAwaiter.Instance?.Type))
        {
            return ".GetAwaiter().GetResult()";
        }

        return null;
    }
}
