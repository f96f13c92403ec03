namespace FanOut.Lab.Running;

/// <summary>How the child that runs a case is built: the JIT (the normal child), NativeAOT, or trimmed self-contained.</summary>
/// <param name="Label">The tag the table adds to the strategy's name, e.g. <c>AOT</c>.</param>
/// <param name="Key">The folder name in the publish cache.</param>
/// <param name="PublishArguments">What <c>dotnet publish</c> gets beyond the project, configuration, runtime and output.</param>
public sealed record RuntimeVariant(string Label, string Key, IReadOnlyList<string> PublishArguments)
{
    /// <summary>The normal child: the framework-dependent app, JIT-compiled (tiered).</summary>
    public static RuntimeVariant Jit { get; } = new("JIT", "jit", []);

    /// <summary>NativeAOT: the child project sets <c>PublishAot</c> for <c>-p:FanOutBuild=aot</c>.</summary>
    public static RuntimeVariant NativeAot { get; } = new("AOT", "aot", ["-p:FanOutBuild=aot"]);

    /// <summary>Trimmed, self-contained, single file (<c>-p:FanOutBuild=trimmed</c>): the seed's build command, whose <c>PublishNativeAot</c>
    /// is not an SDK property, so its "NativeAOT" build was this one.</summary>
    public static RuntimeVariant Trimmed { get; } = new("trimmed", "trimmed", ["-p:FanOutBuild=trimmed"]);

    /// <summary>The strategy name as the table shows it: <c>Channel (all writers) [AOT]</c>; the JIT rows keep their name.</summary>
    public string Tag(string strategy) => this == Jit ? strategy : $"{strategy} [{Label}]";
}
