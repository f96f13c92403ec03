using System.Collections.Immutable;
using System.Reflection;
using System.Text;

using FanOut.Analyzers.Tests.Infrastructure;

using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace FanOut.Analyzers.Tests.LibraryApi;

/// <summary>
/// Issue 26 item 2: the natural first attempts at FanOutAsync compile, bind to the overload they read as and are not
/// ambiguous, on both targets: net10.0 (C# 13 and later, where OverloadResolutionPriority breaks the ValueTask/Task tie) and
/// net8.0 (C# 12, its default, which ignores it), each against FanOut's own assembly for that target and that target's
/// reference assemblies. Compile-only: there is no .NET 8 runtime here (the runtime behaviour is in FanOut.Tests' Api/).
/// </summary>
public sealed class FanOutOverloadMatrixTests
{
    /// <summary>Each call is one statement; <c>// binds: X</c> names the body type the chosen overload takes.</summary>
    private const string Matrix = """
        using System;
        using System.Collections.Generic;
        using System.Net.Http;
        using System.Threading;
        using System.Threading.Tasks;
        using FanOut;

        static class Matrix
        {
            static async Task RunAsync(string[] urls, IAsyncEnumerable<string> stream, HttpClient http, CancellationToken cancellationToken)
            {
                // The README quick start.
                string[] pages = await urls.FanOutAsync(8, (url, ct) => http.GetStringAsync(url, ct), cancellationToken); // binds: Task<TResult>
                string[] a = await urls.FanOutAsync(8, async (url, ct) => await http.GetStringAsync(url, ct)); // binds: async
                await urls.FanOutAsync(8, async (url, ct) => await Task.Delay(1, ct)); // binds: async
                // One-argument bodies, as with Select.
                string[] b = await urls.FanOutAsync(16, async url => await http.GetStringAsync(url)); // binds: async1
                string[] c = await urls.FanOutAsync(16, url => http.GetStringAsync(url)); // binds: Task<TResult>
                await urls.FanOutAsync(16, async url => await Task.Delay(1)); // binds: async1
                await urls.FanOutAsync(16, url => Task.Delay(1), cancellationToken); // binds: Task
                string[] d = await stream.FanOutAsync(4, async url => await http.GetStringAsync(url)); // binds: async1
                // A limit, a body and options.
                string[] e = await urls.FanOutAsync(16, (url, ct) => http.GetStringAsync(url, ct), new FanOutOptions { Errors = ErrorMode.RunAll }); // binds: Task<TResult>
                string[] f = await urls.FanOutAsync(16, async (url, ct) => await http.GetStringAsync(url, ct), new FanOutOptions { Errors = ErrorMode.RunAll }, cancellationToken); // binds: async
                await urls.FanOutAsync(16, async (url, ct) => await Task.Delay(1, ct), new FanOutOptions { Errors = ErrorMode.RunAll }); // binds: async
                // The options forms, unchanged.
                string[] g = await urls.FanOutAsync(async (url, ct) => await http.GetStringAsync(url, ct)); // binds: ValueTask<TResult>
                string[] h = await urls.FanOutAsync((url, ct) => new ValueTask<string>(url), new FanOutOptions { Limit = ConcurrencyLimit.Fixed(4) }); // binds: ValueTask<TResult>
            }
        }
        """;

    [Fact]
    public void Net10_EveryNaturalFormCompilesAndBindsAsItReads()
    {
        var compilation = Compile(Matrix, Net10References(), LanguageVersion.CSharp13);

        Assert.Empty(Errors(compilation));
        // C# 13 and later: an async lambda binds the ValueTask body (OverloadResolutionPriority), both with the token and without.
        AssertBindings(compilation, asyncBody: "ValueTask", asyncBodyWithoutToken: "ValueTask");
    }

    [Fact]
    public void Net10_EveryBodyShapeInEveryFamily_CompilesAndBindsItsOwnOverload()
    {
        // Issue 38 part 5: every family (FanOutAsync with and without results, FanOutStream, FanOutOutcomes), over both
        // sources, with every limit shape it has, takes every body: one argument or (item, ct); async, a Task returned
        // synchronously, a ValueTask. Each call must bind, unambiguously, the overload of its own shape.
        var calls = AllShapes().ToList();
        var source = new StringBuilder("""
            using System.Collections.Generic;
            using System.Threading;
            using System.Threading.Tasks;
            using FanOut;

            static class Shapes
            {
                static void Run(string[] urls, IAsyncEnumerable<string> stream, FanOutOptions options, CancellationToken cancellationToken)
                {

            """);
        foreach (var call in calls)
        {
            source.Append("        ").Append(call.Code).Append(" // shape: ").Append(calls.IndexOf(call)).Append('\n');
        }

        source.Append("    }\n}\n");
        var compilation = Compile(source.ToString(), Net10References(), LanguageVersion.CSharp13);

        Assert.Empty(Errors(compilation).Select(static error => $"{error.GetMessage(System.Globalization.CultureInfo.InvariantCulture)} at {error.Location.GetLineSpan().StartLinePosition}: {error.Location.SourceTree!.GetText().Lines[error.Location.GetLineSpan().StartLinePosition.Line]}"));
        var tree = compilation.SyntaxTrees.Single();
        var model = compilation.GetSemanticModel(tree);
        var invocations = tree.GetRoot().DescendantNodes().OfType<InvocationExpressionSyntax>()
            .Where(static call => call.Expression is MemberAccessExpressionSyntax { Name.Identifier.ValueText: "FanOutAsync" or "FanOutStream" or "FanOutOutcomes" })
            .ToList();
        Assert.Equal(calls.Count, invocations.Count);
        foreach (var invocation in invocations)
        {
            var line = tree.GetText().Lines.GetLineFromPosition(invocation.SpanStart).ToString();
            var shape = calls[int.Parse(line[(line.IndexOf("// shape: ", StringComparison.Ordinal) + "// shape: ".Length)..], System.Globalization.CultureInfo.InvariantCulture)];
            var method = Assert.IsAssignableFrom<IMethodSymbol>(model.GetSymbolInfo(invocation).Symbol);
            var parameters = method.ReducedFrom?.Parameters ?? method.Parameters;
            var body = ((INamedTypeSymbol)parameters.Single(static parameter => parameter.Name == "body").Type).DelegateInvokeMethod!;
            var returned = (INamedTypeSymbol)body.ReturnType;
            var names = parameters.Select(static parameter => parameter.Name).ToList();
            Assert.True(body.Parameters.Length == shape.Arity, $"{shape.Code}: bound a body of {body.Parameters.Length} arguments");
            Assert.True(returned.Name == shape.BodyReturns, $"{shape.Code}: bound a {returned.Name} body, expected {shape.BodyReturns}");
            Assert.True(returned.IsGenericType == shape.Results, $"{shape.Code}: bound {returned.ToDisplayString()}");
            Assert.True(names.Contains("maxConcurrency") == shape.Limit.StartsWith("int", StringComparison.Ordinal), $"{shape.Code}: bound ({string.Join(", ", names)})");
            // Without a maxConcurrency the options are the limit (optional); with one, only the (maxConcurrency, body, options) form takes them.
            Assert.True(names.Contains("options") == shape.Limit is not ("int" or "int+token"), $"{shape.Code}: bound ({string.Join(", ", names)})");
            Assert.True(parameters[0].Type.Name == (shape.Source == "urls" ? "IEnumerable" : "IAsyncEnumerable"), $"{shape.Code}: bound a {parameters[0].Type.Name} source");
        }
    }

    /// <summary>One call of <see cref="Net10_EveryBodyShapeInEveryFamily_CompilesAndBindsItsOwnOverload"/> and the overload it must bind.</summary>
    private sealed record Shape(string Code, string Source, string Limit, int Arity, string BodyReturns, bool Results);

    private static IEnumerable<Shape> AllShapes()
    {
        string[] kinds = ["async", "Task", "ValueTask"];
        foreach (var (method, results) in new[] { ("FanOutAsync", true), ("FanOutAsync", false), ("FanOutStream", true), ("FanOutOutcomes", true) })
        {
            string[] limits = method == "FanOutAsync"
                ? ["none", "options", "int", "int+token", "int+options"]
                : ["none", "options", "int", "int+token"];
            foreach (var source in new[] { "urls", "stream" })
            {
                foreach (var limit in limits)
                {
                    foreach (var arity in new[] { 1, 2 })
                    {
                        foreach (var kind in kinds)
                        {
                            var body = (results, arity, kind) switch
                            {
                                (true, 1, "async") => "async x => { await Task.Yield(); return x.Length; }",
                                (true, 1, "Task") => "x => Task.FromResult(x.Length)",
                                (true, 1, _) => "x => new ValueTask<int>(x.Length)",
                                (true, _, "async") => "async (x, ct) => { await Task.Delay(1, ct); return x.Length; }",
                                (true, _, "Task") => "(x, ct) => Task.FromResult(x.Length)",
                                (true, _, _) => "(x, ct) => new ValueTask<int>(x.Length)",
                                (false, 1, "async") => "async x => await Task.Delay(1)",
                                (false, 1, "Task") => "x => Task.Delay(1)",
                                (false, 1, _) => "x => ValueTask.CompletedTask",
                                (false, _, "async") => "async (x, ct) => await Task.Delay(1, ct)",
                                (false, _, "Task") => "(x, ct) => Task.Delay(1, ct)",
                                (false, _, _) => "(x, ct) => ValueTask.CompletedTask",
                            };
                            var arguments = limit switch
                            {
                                "none" => body,
                                "options" => $"{body}, options, cancellationToken",
                                "int" => $"8, {body}",
                                "int+token" => $"8, {body}, cancellationToken",
                                _ => $"8, {body}, options",
                            };
                            // An async lambda binds the ValueTask body (it allocates nothing when the body completes synchronously).
                            yield return new Shape($"_ = {source}.{method}({arguments});", source, limit, arity, kind == "Task" ? "Task" : "ValueTask", results);
                        }
                    }
                }
            }
        }
    }

    [Fact]
    public void Net8_EveryNaturalFormCompilesAndBindsAsItReads()
    {
        var compilation = Compile(Matrix, Net8References(), LanguageVersion.CSharp12);

        Assert.Empty(Errors(compilation));
        // C# 12: the shortcuts have Task bodies only on net8.0, so an async lambda binds them, with no ambiguity.
        AssertBindings(compilation, asyncBody: "Task", asyncBodyWithoutToken: "Task");
    }

    [Fact]
    public void Net8_ValueTaskBodyInTheShortcut_IsTheRecordedGap()
    {
        // What net8.0 gives up for the README's form: a non-async ValueTask lambda in the maxConcurrency shortcut (net10.0 has
        // it). The options form takes it on both; this test fails if the gap closes, so the docs can say so.
        const string Source = """
            using System.Threading.Tasks;
            using FanOut;

            static class Gap
            {
                static async Task RunAsync(string[] urls) =>
                    _ = await urls.FanOutAsync(8, (url, ct) => new ValueTask<string>(url));
            }
            """;

        Assert.NotEmpty(Errors(Compile(Source, Net8References(), LanguageVersion.CSharp12)));
        Assert.Empty(Errors(Compile(Source, Net10References(), LanguageVersion.CSharp13)));
    }

    [Fact]
    public void DefaultThirdArgument_IsTheTokenOnBothTargets()
    {
        // `default` fits both the token and the options. net10.0 ranks the options overloads lower; C# 12 prefers the
        // overload that needs no default of its own (the options one would still default its token).
        const string Source = """
            using System.Net.Http;
            using System.Threading.Tasks;
            using FanOut;

            static class Default
            {
                static async Task RunAsync(string[] urls, HttpClient http) =>
                    _ = await urls.FanOutAsync(8, async (url, ct) => await http.GetStringAsync(url, ct), default);
            }
            """;

        foreach (var compilation in new[] { Compile(Source, Net10References(), LanguageVersion.CSharp13), Compile(Source, Net8References(), LanguageVersion.CSharp12) })
        {
            Assert.Empty(Errors(compilation));
            var tree = compilation.SyntaxTrees.Single();
            var call = tree.GetRoot().DescendantNodes().OfType<InvocationExpressionSyntax>().Single(c => c.ArgumentList.Arguments.Count == 3);
            var method = Assert.IsAssignableFrom<IMethodSymbol>(compilation.GetSemanticModel(tree).GetSymbolInfo(call).Symbol);
            Assert.Equal("cancellationToken", method.Parameters[^1].Name);
            Assert.DoesNotContain(method.Parameters, parameter => parameter.Name == "options");
        }
    }

    [Fact]
    public void Net10_MethodGroupWithAndWithoutToken_BindsTheOneThatTakesTheToken()
    {
        // A method group that fits a one-argument and a two-argument body: the token-taking one ranks higher on net10.0
        // (C# 12 on net8.0 cannot rank them: pass a lambda there, as the class remarks say).
        const string Source = """
            using System.Threading;
            using System.Threading.Tasks;
            using FanOut;

            static class Group
            {
                static Task<string> GetAsync(string url) => Task.FromResult(url);
                static Task<string> GetAsync(string url, CancellationToken ct) => Task.FromResult(url);
                static async Task RunAsync(string[] urls) => _ = await urls.FanOutAsync(8, GetAsync);
            }
            """;

        var compilation = Compile(Source, Net10References(), LanguageVersion.CSharp13);
        Assert.Empty(Errors(compilation));
        var tree = compilation.SyntaxTrees.Single();
        var call = tree.GetRoot().DescendantNodes().OfType<InvocationExpressionSyntax>().Single(c => c.ArgumentList.Arguments.Count == 2);
        var method = Assert.IsAssignableFrom<IMethodSymbol>(compilation.GetSemanticModel(tree).GetSymbolInfo(call).Symbol);
        var body = (INamedTypeSymbol)method.Parameters.Single(parameter => parameter.Name == "body").Type;
        Assert.Equal(3, body.TypeArguments.Length);
    }

    [Fact]
    public void Net8_TaskAndValueTaskShortcutsSideBySide_WouldBeAmbiguous()
    {
        // Why net8.0 has one body type per shape: C# 12 reports an async lambda ambiguous between a Task and a ValueTask body.
        const string Source = """
            using System;
            using System.Threading;
            using System.Threading.Tasks;

            static class Both
            {
                public static Task<R[]> Run<T, R>(this T[] source, int n, Func<T, CancellationToken, ValueTask<R>> body) => throw null!;
                public static Task<R[]> Run<T, R>(this T[] source, int n, Func<T, CancellationToken, Task<R>> body) => throw null!;

                static async Task UseAsync(string[] urls) => _ = await urls.Run(8, async (url, ct) => { await Task.Yield(); return url; });
            }
            """;

        Assert.Contains(Errors(Compile(Source, Net8References(), LanguageVersion.CSharp12)), d => d.Id == "CS0121");
    }

    private static void AssertBindings(CSharpCompilation compilation, string asyncBody, string asyncBodyWithoutToken)
    {
        var tree = compilation.SyntaxTrees.Single();
        var model = compilation.GetSemanticModel(tree);
        var calls = tree.GetRoot().DescendantNodes().OfType<InvocationExpressionSyntax>()
            .Where(call => call.Expression is MemberAccessExpressionSyntax { Name.Identifier.ValueText: "FanOutAsync" })
            .ToList();
        Assert.Equal(13, calls.Count);
        foreach (var call in calls)
        {
            var line = tree.GetText().Lines.GetLineFromPosition(call.SpanStart).ToString();
            var expected = line[(line.IndexOf("// binds: ", StringComparison.Ordinal) + "// binds: ".Length)..].Trim() switch
            {
                "async" => asyncBody,
                "async1" => asyncBodyWithoutToken,
                var other => other,
            };
            var method = Assert.IsAssignableFrom<IMethodSymbol>(model.GetSymbolInfo(call).Symbol);
            var body = (INamedTypeSymbol)method.Parameters.Single(parameter => parameter.Name == "body").Type;
            var returned = body.DelegateInvokeMethod!.ReturnType.OriginalDefinition.ToDisplayString(SymbolDisplayFormat.MinimallyQualifiedFormat);
            Assert.True(returned == expected || (expected is "Task" or "ValueTask" && returned.StartsWith(expected, StringComparison.Ordinal)), $"{line.Trim()}: bound a {returned} body, expected {expected}");
            // A call that reads as returning results returns them.
            if (line.Contains("string[]", StringComparison.Ordinal))
            {
                Assert.Equal("Task<TResult[]>", method.OriginalDefinition.ReturnType.ToDisplayString(SymbolDisplayFormat.MinimallyQualifiedFormat));
            }
        }
    }

    private static CSharpCompilation Compile(string source, IEnumerable<MetadataReference> references, LanguageVersion version) =>
        CSharpCompilation.Create(
            "Matrix",
            [CSharpSyntaxTree.ParseText(source, new CSharpParseOptions(version))],
            references,
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, nullableContextOptions: NullableContextOptions.Enable));

    private static IEnumerable<Diagnostic> Errors(Compilation compilation) =>
        compilation.GetDiagnostics().Where(static diagnostic => diagnostic.Severity == DiagnosticSeverity.Error);

    private static ImmutableArray<MetadataReference> Net10References() =>
        TestReferences.Framework.Add(TestReferences.FanOutLibrary).Add(TestReferences.RateLimiting);

    /// <summary>The net8.0 reference pack, FanOut's net8.0 assembly and its net8.0 dependencies, from the NuGet cache.</summary>
    private static ImmutableArray<MetadataReference> Net8References()
    {
        var packages = Metadata("NuGetPackageRoot");
        var referencePack = Directory.GetDirectories(Path.Combine(packages, "microsoft.netcore.app.ref"), "8.0.*")
            .OrderBy(static directory => Version.Parse(Path.GetFileName(directory)))
            .LastOrDefault() ?? throw new InvalidOperationException($"no net8.0 reference pack (microsoft.netcore.app.ref 8.0.*) under {packages}");
        var rateLimiting = Directory.GetFiles(Path.Combine(packages, "system.threading.ratelimiting"), "System.Threading.RateLimiting.dll", SearchOption.AllDirectories)
            .First(static path => path.Contains($"{Path.DirectorySeparatorChar}net8.0{Path.DirectorySeparatorChar}", StringComparison.Ordinal));
        var fanOut = Path.GetFullPath(Metadata("FanOutNet8Assembly"));
        Assert.True(File.Exists(fanOut), $"FanOut's net8.0 assembly is not built: {fanOut}");
        return [.. Directory.GetFiles(Path.Combine(referencePack, "ref", "net8.0"), "*.dll")
            .Append(rateLimiting)
            .Append(fanOut)
            .Select(static path => (MetadataReference)MetadataReference.CreateFromFile(path))];
    }

    private static string Metadata(string key) =>
        typeof(FanOutOverloadMatrixTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(attribute => attribute.Key == key).Value
        ?? throw new InvalidOperationException($"no {key} metadata");
}
