using System.Collections.Generic;
using System.Linq;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers.Analysis;

/// <summary>
/// The loop form of an unbounded fan-out: <c>foreach (var x in source) tasks.Add(CallAsync(x)); await Task.WhenAll(tasks);</c>,
/// the list filled by a foreach earlier in the same block (or the same top-level statements) as the Task.WhenAll that awaits it.
/// </summary>
internal static class TaskLoop
{
    /// <summary>The foreach that fills the local list <paramref name="argument"/> names, one Add per item, or null.</summary>
    /// <param name="argument">The Task.WhenAll argument.</param>
    /// <param name="symbols">The compilation's known types.</param>
    /// <param name="add">The loop's <c>list.Add(task)</c> call.</param>
    public static IForEachLoopOperation? Find(IOperation argument, KnownSymbols symbols, out IInvocationOperation? add)
    {
        add = null;
        if (ProjectionSource.SkipMaterialization(OperationWalk.Unwrap(argument), symbols) is not ILocalReferenceOperation list
            || argument.SemanticModel is not { } model
            || argument.Syntax.FirstAncestorOrSelf<StatementSyntax>() is not { } statement
            || SiblingStatements(statement) is not { } siblings)
        {
            return null;
        }

        foreach (var candidate in siblings.TakeWhile(s => s != statement).Reverse().OfType<ForEachStatementSyntax>())
        {
            if (model.GetOperation(candidate) is IForEachLoopOperation loop && SingleAdd(loop, list.Local) is { } call)
            {
                add = call;
                return loop;
            }
        }

        return null;
    }

    /// <summary>
    /// The statements of the block that holds <paramref name="statement"/>: a block's, or the top-level statements of the
    /// file (each wrapped in a GlobalStatementSyntax) for a program without Main. Null anywhere else.
    /// </summary>
    public static IEnumerable<StatementSyntax>? SiblingStatements(StatementSyntax statement) => statement.Parent switch
    {
        BlockSyntax block => block.Statements,
        GlobalStatementSyntax { Parent: CompilationUnitSyntax unit } => unit.Members.OfType<GlobalStatementSyntax>().Select(static global => global.Statement),
        _ => null,
    };

    /// <summary>The loop body's only statement when it is <c>list.Add(x)</c> on <paramref name="list"/>.</summary>
    private static IInvocationOperation? SingleAdd(IForEachLoopOperation loop, ILocalSymbol list)
    {
        var body = loop.Body is IBlockOperation { Operations.Length: 1 } block ? block.Operations[0] : loop.Body;
        return body is IExpressionStatementOperation
        {
            Operation: IInvocationOperation { TargetMethod.Name: "Add", Instance: ILocalReferenceOperation target, Arguments.Length: 1 } add,
        }
            && SymbolEqualityComparer.Default.Equals(target.Local, list)
            ? add
            : null;
    }
}
