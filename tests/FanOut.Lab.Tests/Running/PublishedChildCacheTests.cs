using FanOut.Lab.Running;

namespace FanOut.Lab.Tests.Running;

/// <summary>The publish cache's key and lookup, on a fake source tree: nothing here runs <c>dotnet publish</c>.</summary>
public sealed class PublishedChildCacheTests : IDisposable
{
    private readonly string _root = Path.Combine(Path.GetTempPath(), $"fanout-cache-test-{Guid.NewGuid():N}");
    private readonly string _source;
    private readonly PublishedChildCache _cache;

    public PublishedChildCacheTests()
    {
        _source = Path.Combine(_root, "repo");
        Write("FanOut.slnx", "<Solution />");
        Write(PublishedChildCache.ChildProject, "<Project />");
        Write("src/FanOut.Lab/Item.cs", "class Item {}");
        Write("src/FanOut.Lab/obj/Generated.cs", "class Generated {}");
        _cache = new PublishedChildCache(_source, Path.Combine(_root, "cache"));
    }

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public void InputHash_SourceFileChanges_ChangesTheKey()
    {
        var before = _cache.InputHash(RuntimeVariant.NativeAot);
        Write("src/FanOut.Lab/Item.cs", "class Item { int _x; }");

        Assert.NotEqual(before, _cache.InputHash(RuntimeVariant.NativeAot));
    }

    [Fact]
    public void InputHash_BuildOutputChanges_KeepsTheKey()
    {
        var before = _cache.InputHash(RuntimeVariant.NativeAot);
        Write("src/FanOut.Lab/obj/Generated.cs", "class Generated { int _y; }");

        Assert.Equal(before, _cache.InputHash(RuntimeVariant.NativeAot));
    }

    [Fact]
    public void InputHash_OtherBuild_OtherKey()
    {
        Assert.NotEqual(_cache.InputHash(RuntimeVariant.NativeAot), _cache.InputHash(RuntimeVariant.Trimmed));
    }

    [Fact]
    public void Ensure_ChildAlreadyCached_ReturnsItWithoutPublishing()
    {
        var folder = _cache.FolderFor(RuntimeVariant.Trimmed);
        Directory.CreateDirectory(folder);
        File.WriteAllText(Path.Combine(folder, PublishedChildCache.ChildExecutable), "cached");
        var logged = new List<string>();

        var executable = _cache.Ensure(RuntimeVariant.Trimmed, logged.Add, out var error);

        Assert.Equal(Path.Combine(folder, PublishedChildCache.ChildExecutable), executable);
        Assert.Null(error);
        Assert.Empty(logged);
    }

    [Fact]
    public void FindSourceRoot_NestedFolder_FindsTheRepository()
    {
        Assert.Equal(_source, PublishedChildCache.FindSourceRoot(Path.Combine(_source, "src", "FanOut.Lab", "obj")));
        Assert.Null(PublishedChildCache.FindSourceRoot(_root));
    }

    [Theory]
    [InlineData("error : Platform linker ('clang') not found in PATH", "apt-get install clang")]
    [InlineData("/usr/bin/ld: cannot find -lz: No such file or directory", "zlib1g-dev")]
    [InlineData("error NU1101: Unable to find package runtime.linux-x64.Microsoft.DotNet.ILCompiler", "runtime.linux-x64.Microsoft.DotNet.ILCompiler")]
    public void Explain_MissingToolchain_SaysWhatIsMissing(string output, string named)
    {
        var explanation = PublishedChildCache.Explain(output);

        Assert.StartsWith("missing ", explanation, StringComparison.Ordinal);
        Assert.Contains(named, explanation, StringComparison.Ordinal);
    }

    private void Write(string relative, string text)
    {
        var path = Path.Combine(_source, relative);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        File.WriteAllText(path, text);
    }
}
