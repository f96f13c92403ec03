namespace FanOut.Lab.Tests.Probing;

/// <summary>
/// The trait of tests that time a real server or judge a wall-clock rate: .ci/run leaves them out of the parallel
/// <c>dotnet test</c> and runs them alone afterwards, so that other test assemblies do not starve the client of the CPU it
/// measures with (a CI run measured 39.4/s against nginx's 100/s while other assemblies ran beside it).
/// </summary>
/// <remarks>A plain <c>dotnet test</c> still runs them with everything else.</remarks>
internal static class SerialTests
{
    /// <summary>The trait's name, as <c>--filter "Category=Serial"</c> reads it.</summary>
    public const string Category = "Category";

    /// <summary>The trait's value.</summary>
    public const string Serial = "Serial";
}
