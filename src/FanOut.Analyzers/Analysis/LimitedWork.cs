using System.Collections.Generic;
using System.Linq;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Operations;

namespace FanOut.Analyzers.Analysis;

/// <summary>
/// Recognises per-item work that is limited where FO0003 cannot count it: gated by an acquire inside it, run through a
/// Polly pipeline, or sent through an HttpClient whose handlers may hold a limit. This is the code the FanOut packages
/// recommend or print (<c>fanout probe</c>'s SemaphoreSlim snippet, FanOut.Http's <c>AddFanOutLimit()</c>,
/// <c>limit.AsRateLimiter()</c> in a pipeline), so FO0003 stays silent on it.
/// </summary>
/// <remarks>
/// The rules, in docs/analyzers/FO0003.md: a call anywhere in the projected work (nested lambdas included, and one call
/// deep into a method or local function declared in the same file) to
/// <list type="bullet">
/// <item><c>SemaphoreSlim.WaitAsync/Wait</c>, <c>RateLimiter.AcquireAsync/AttemptAcquire</c>, or a FanOut
/// <c>ConcurrencyLimit</c>'s <c>WaitAsync/TryAcquire/AsRateLimiter</c>: a gate;</item>
/// <item><c>ResiliencePipeline.ExecuteAsync/Execute</c> (Polly v8): a pipeline is where a limiter strategy goes, and it is
/// built where the analyzer does not look;</item>
/// <item>an <c>HttpClient</c> (or <c>HttpMessageInvoker</c>) method or extension: limited unless the client is visibly made
/// without a limiting handler (<c>new HttpClient()</c>, or over a bare <c>new HttpClientHandler()</c>/<c>new SocketsHttpHandler()</c>,
/// in a local or field initializer of the same file). A client the analyzer cannot see made (a parameter, an injected field,
/// <c>IHttpClientFactory.CreateClient</c>) counts as limited only when its handlers can be configured out of sight: the
/// compilation references Microsoft.Extensions.Http (where <c>AddFanOutLimit()</c> and <c>AddResilienceHandler</c> plug in)
/// or FanOut.Http.</item>
/// </list>
/// </remarks>
internal static class LimitedWork
{
    /// <summary>Whether the work made per item by <paramref name="perItem"/> (a selector, or the task a loop adds) is limited.</summary>
    public static bool IsLimited(IOperation perItem, KnownSymbols symbols) =>
        WithCallees(perItem).Any(operation => IsLimitingCall(operation, symbols));

    /// <summary>Every operation under <paramref name="root"/>, then those of the same-file methods it calls (one level).</summary>
    private static IEnumerable<IOperation> WithCallees(IOperation root)
    {
        var visited = new HashSet<IMethodSymbol>(SymbolEqualityComparer.Default);
        foreach (var operation in root.DescendantsAndSelf())
        {
            yield return operation;
            var callee = operation switch
            {
                IInvocationOperation invocation => invocation.TargetMethod,
                IMethodReferenceOperation reference => reference.Method,
                _ => null,
            };
            if (callee is null || !visited.Add(callee.OriginalDefinition) || BodyOf(callee, root.SemanticModel) is not { } body)
            {
                continue;
            }

            foreach (var inner in body.DescendantsAndSelf())
            {
                yield return inner;
            }
        }
    }

    /// <summary>The body of a method or local function declared in the tree of <paramref name="model"/>; null otherwise.</summary>
    private static IOperation? BodyOf(IMethodSymbol method, SemanticModel? model)
    {
        if (model is null)
        {
            return null;
        }

        foreach (var reference in method.OriginalDefinition.DeclaringSyntaxReferences)
        {
            if (reference.SyntaxTree == model.SyntaxTree
                && reference.GetSyntax() is BaseMethodDeclarationSyntax or LocalFunctionStatementSyntax
                && model.GetOperation(reference.GetSyntax()) is { } body)
            {
                return body;
            }
        }

        return null;
    }

    private static bool IsLimitingCall(IOperation operation, KnownSymbols symbols)
    {
        if (operation is not IInvocationOperation invocation)
        {
            return false;
        }

        var method = invocation.TargetMethod;
        var owner = method.ContainingType;
        switch (method.Name)
        {
            case "WaitAsync" or "Wait" when KnownSymbols.IsOrDerivesFrom(owner, symbols.SemaphoreSlim):
            case "AcquireAsync" or "AttemptAcquire" when KnownSymbols.IsOrDerivesFrom(owner, symbols.RateLimiter):
            case "WaitAsync" or "TryAcquire" when KnownSymbols.IsOrDerivesFrom(owner, symbols.ConcurrencyLimit):
            case "AsRateLimiter" when method.Parameters.Length == 1 && KnownSymbols.IsOrDerivesFrom(method.Parameters[0].Type, symbols.ConcurrencyLimit):
                return true;
            case "ExecuteAsync" or "Execute" when KnownSymbols.IsOrDerivesFrom(owner, symbols.ResiliencePipeline)
                || KnownSymbols.IsOrDerivesFrom(owner, symbols.ResiliencePipelineOfT):
                return true;
        }

        var client = invocation.Instance is { } instance && KnownSymbols.IsOrDerivesFrom(instance.Type, symbols.HttpMessageInvoker)
            ? instance
            : method.IsExtensionMethod && invocation.Arguments.Length > 0
                && KnownSymbols.IsOrDerivesFrom(method.Parameters[0].Type, symbols.HttpMessageInvoker)
                ? invocation.Arguments[0].Value
                : null;
        return client is not null && HttpClientMayBeLimited(client, symbols);
    }

    /// <summary>Whether the HttpClient <paramref name="client"/> may carry a limiting handler (see the remarks).</summary>
    private static bool HttpClientMayBeLimited(IOperation client, KnownSymbols symbols)
    {
        var value = OperationWalk.Unwrap(client);
        var creation = value switch
        {
            IObjectCreationOperation created => created,
            ILocalReferenceOperation local => ProjectionSource.InitializerOf(local.Local, value.SemanticModel) is { } initializer
                ? OperationWalk.Unwrap(initializer) as IObjectCreationOperation
                : null,
            IFieldReferenceOperation field => ProjectionSource.InitializerOf(field.Field, value.SemanticModel) is { } initializer
                ? OperationWalk.Unwrap(initializer) as IObjectCreationOperation
                : null,
            _ => null,
        };
        if (creation is not null)
        {
            // Made here: limited only through a handler that is not a bare default one.
            return creation.Arguments.Any(static argument => argument.Parameter?.Type.Name == "HttpMessageHandler"
                && !IsBareDefaultHandler(OperationWalk.Unwrap(argument.Value)));
        }

        return symbols.HttpClientFactory is not null || symbols.FanOutLimitHandler is not null;
    }

    /// <summary><c>new HttpClientHandler()</c> or <c>new SocketsHttpHandler()</c> with nothing set: no limit per server.</summary>
    private static bool IsBareDefaultHandler(IOperation handler) =>
        handler is IObjectCreationOperation { Arguments.Length: 0, Initializer: null, Type.Name: "HttpClientHandler" or "SocketsHttpHandler" };
}
