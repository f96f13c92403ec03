using System.Collections.Immutable;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers;

/// <summary>
/// FO0002: <c>.Result</c>, <c>.Wait()</c>, <c>.GetAwaiter().GetResult()</c> or <c>Task.WaitAll/WaitAny</c> inside the
/// synchronous body of Parallel.For, ForEach or Invoke, whatever the enclosing method is.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class BlockingWaitInParallelLoopAnalyzer : DiagnosticAnalyzer
{
    /// <inheritdoc />
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } =
        ImmutableArray.Create(FanOutDiagnostics.BlockingWaitInParallelLoop);

    /// <inheritdoc />
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterInvocationAnalysis(static symbols => symbols.Parallel is not null, Analyze);
    }

    private static void Analyze(OperationAnalysisContext context, KnownSymbols symbols)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (!symbols.IsSynchronousParallelLoop(invocation.TargetMethod))
        {
            return;
        }

        var hint = EnclosingFunction.IsAsync(invocation.Syntax) ? "" : " from an async method";
        foreach (var argument in invocation.Arguments)
        {
            foreach (var value in OperationWalk.DelegatesOf(argument))
            {
                // An async body is FO0001's finding; a blocking wait in it is the lesser problem.
                if (value is not IDelegateCreationOperation { Target: IAnonymousFunctionOperation { Symbol.IsAsync: false } body })
                {
                    continue;
                }

                foreach (var operation in OperationWalk.DescendantsInSameFunction(body.Body))
                {
                    var wait = BlockingWait.Describe(operation, symbols);
                    if (wait is not null)
                    {
                        context.ReportDiagnostic(Diagnostic.Create(
                            FanOutDiagnostics.BlockingWaitInParallelLoop,
                            operation.Syntax.GetLocation(),
                            additionalLocations: [invocation.Syntax.GetLocation()],
                            wait,
                            invocation.TargetMethod.Name,
                            hint));
                    }
                }
            }
        }
    }
}
