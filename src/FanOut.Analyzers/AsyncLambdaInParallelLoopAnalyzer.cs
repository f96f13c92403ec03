using System.Collections.Immutable;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers;

/// <summary>FO0001: an async lambda (or an async void method group) handed to Parallel.For, ForEach or Invoke.</summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class AsyncLambdaInParallelLoopAnalyzer : DiagnosticAnalyzer
{
    /// <inheritdoc />
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } =
        ImmutableArray.Create(FanOutDiagnostics.AsyncLambdaInParallelLoop);

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
                var location = AsyncVoidLocation(value);
                if (location is not null)
                {
                    context.ReportDiagnostic(Diagnostic.Create(
                        FanOutDiagnostics.AsyncLambdaInParallelLoop,
                        location,
                        additionalLocations: [invocation.Syntax.GetLocation()],
                        invocation.TargetMethod.Name,
                        hint));
                }
            }
        }
    }

    /// <summary>Where to report an async lambda (its <c>async</c> keyword) or an async void method group; null otherwise.</summary>
    private static Location? AsyncVoidLocation(IOperation value)
    {
        if (value is not IDelegateCreationOperation creation)
        {
            return null;
        }

        return creation.Target switch
        {
            IAnonymousFunctionOperation { Symbol.IsAsync: true, Syntax: AnonymousFunctionExpressionSyntax lambda } =>
                lambda.AsyncKeyword.GetLocation(),
            IMethodReferenceOperation { Method: { IsAsync: true, ReturnsVoid: true } } reference => reference.Syntax.GetLocation(),
            _ => null,
        };
    }
}
