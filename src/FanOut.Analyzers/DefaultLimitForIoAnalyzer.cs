using System.Collections.Immutable;
using System.Linq;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers;

/// <summary>
/// FO0005 (info): Parallel.ForEachAsync or ForAsync with no MaxDegreeOfParallelism whose body awaits something that looks
/// like I/O (anything but Task.Yield, Task.Run and already-completed tasks).
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class DefaultLimitForIoAnalyzer : DiagnosticAnalyzer
{
    /// <inheritdoc />
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } =
        ImmutableArray.Create(FanOutDiagnostics.DefaultLimitForIo);

    /// <inheritdoc />
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterInvocationAnalysis(static symbols => symbols.Parallel is not null && symbols.ParallelOptions is not null, Analyze);
    }

    private static void Analyze(OperationAnalysisContext context, KnownSymbols symbols)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (!symbols.IsAsyncParallelLoop(invocation.TargetMethod) || !LeavesDefaultLimit(invocation, symbols))
        {
            return;
        }

        var body = invocation.Arguments.Select(static argument => OperationWalk.LambdaOf(argument.Value)).LastOrDefault(static lambda => lambda is not null);
        var awaited = body is null ? null : FirstIoAwait(body, symbols);
        if (awaited is null)
        {
            return;
        }

        var location = invocation.Syntax is InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax access }
            ? access.Name.GetLocation()
            : invocation.Syntax.GetLocation();
        context.ReportDiagnostic(Diagnostic.Create(
            FanOutDiagnostics.DefaultLimitForIo,
            location,
            invocation.TargetMethod.Name,
            awaited.Syntax.ToString()));
    }

    /// <summary>
    /// Whether the call runs at the default limit: no ParallelOptions, or a <c>new ParallelOptions { ... }</c> that does
    /// not set MaxDegreeOfParallelism. Options built elsewhere are given the benefit of the doubt.
    /// </summary>
    private static bool LeavesDefaultLimit(IInvocationOperation invocation, KnownSymbols symbols)
    {
        var options = invocation.Arguments.FirstOrDefault(argument => KnownSymbols.Is(argument.Parameter?.Type, symbols.ParallelOptions));
        if (options is null)
        {
            return true;
        }

        if (OperationWalk.Unwrap(options.Value) is not IObjectCreationOperation creation)
        {
            return false;
        }

        return creation.Initializer is null
            || !creation.Initializer.Initializers.OfType<ISimpleAssignmentOperation>()
                .Any(static assignment => assignment.Target is IPropertyReferenceOperation { Property.Name: "MaxDegreeOfParallelism" });
    }

    /// <summary>The first awaited operand in the body that is not Task.Yield, Task.Run or a completed task; null if none.</summary>
    private static IOperation? FirstIoAwait(IAnonymousFunctionOperation body, KnownSymbols symbols) =>
        OperationWalk.DescendantsInSameFunction(body.Body)
            .OfType<IAwaitOperation>()
            .Select(static awaitOperation => OperationWalk.Unwrap(awaitOperation.Operation))
            .OrderBy(static operand => operand.Syntax.SpanStart)
            .FirstOrDefault(operand => !IsCpuOrNoWait(operand, symbols));

    private static bool IsCpuOrNoWait(IOperation operand, KnownSymbols symbols)
    {
        var operation = operand is IInvocationOperation { TargetMethod.Name: "ConfigureAwait", Instance: { } configured }
            ? OperationWalk.Unwrap(configured)
            : operand;
        return operation switch
        {
            IInvocationOperation { TargetMethod: { Name: "Yield" or "Run" or "FromResult" or "FromCanceled" or "FromException" } method } =>
                KnownSymbols.Is(method.ContainingType, symbols.Task),
            IPropertyReferenceOperation { Property.Name: "CompletedTask" } property =>
                KnownSymbols.Is(property.Property.ContainingType, symbols.Task) || KnownSymbols.Is(property.Property.ContainingType, symbols.ValueTask),
            _ => false,
        };
    }
}
