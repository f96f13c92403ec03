using System.Collections.Immutable;

using FanOut.Analyzers.Analysis;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers;

/// <summary>
/// FO0003: Task.WhenAll over a <c>Select</c> projection of a collection whose size is not a small compile-time constant
/// (a parameter, field, query result, any IEnumerable), or over a list a foreach filled with one task per item of one
/// (<c>foreach (var x in source) tasks.Add(CallAsync(x));</c>, in a method or in top-level statements): every item starts
/// at once, with no limit. Work that is limited where the rule cannot count it is left alone (<see cref="LimitedWork"/>).
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class UnboundedWhenAllAnalyzer : DiagnosticAnalyzer
{
    /// <summary>Diagnostic property: "true" when the projection is written inside the WhenAll call, so a fix can move it.</summary>
    public const string InlineProjectionProperty = "InlineProjection";

    /// <summary>Diagnostic property: "true" when the tasks come from a foreach loop (its location is the additional location).</summary>
    public const string LoopFormProperty = "LoopForm";

    /// <inheritdoc />
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } =
        ImmutableArray.Create(FanOutDiagnostics.UnboundedWhenAll);

    /// <inheritdoc />
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterInvocationAnalysis(static symbols => symbols.Task is not null && symbols.Enumerable is not null, Analyze);
    }

    private static void Analyze(OperationAnalysisContext context, KnownSymbols symbols)
    {
        var invocation = (IInvocationOperation)context.Operation;
        var method = invocation.TargetMethod;
        if (method.Name != "WhenAll" || !KnownSymbols.Is(method.ContainingType, symbols.Task)
            || invocation.Arguments.Length != 1 || invocation.Arguments[0].ArgumentKind != ArgumentKind.Explicit)
        {
            return;
        }

        var select = ProjectionSource.FindSelect(invocation.Arguments[0].Value, symbols, out var throughLocal);
        IOperation source;
        IOperation perItem;
        Location? loopLocation = null;
        if (select is { Arguments.Length: 2 })
        {
            source = select.Arguments[0].Value;
            perItem = select.Arguments[1].Value;
        }
        else if (select is null && TaskLoop.Find(invocation.Arguments[0].Value, symbols, out var add) is { } loop)
        {
            source = loop.Collection;
            perItem = add!.Arguments[0].Value;
            loopLocation = loop.Syntax.GetLocation();
            throughLocal = true;
        }
        else
        {
            return;
        }

        // A small fixed set, or work already held to a limit (a gate inside it, a Polly pipeline, an HttpClient whose
        // handlers may limit it): not the unbounded fan-out this rule is about.
        if (ProjectionSource.IsSmallConstant(source, symbols) || LimitedWork.IsLimited(perItem, symbols))
        {
            return;
        }

        var suggestion = symbols.FanOutExtensions is not null
            ? "FanOutAsync with a ConcurrencyLimit"
            : "Parallel.ForEachAsync with a MaxDegreeOfParallelism";
        var properties = ImmutableDictionary<string, string?>.Empty
            .Add(InlineProjectionProperty, throughLocal ? "false" : "true")
            .Add(LoopFormProperty, loopLocation is null ? "false" : "true");
        context.ReportDiagnostic(Diagnostic.Create(
            FanOutDiagnostics.UnboundedWhenAll,
            invocation.Syntax.GetLocation(),
            loopLocation is null ? null : new[] { loopLocation },
            properties,
            OperationWalk.Unwrap(source).Syntax.ToString(),
            suggestion));
    }
}
