namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>
/// The trait that marks a scenario written for one of issue 25's defects: it fails on the code the issue was filed
/// against and passes once the protocol is rewritten. <c>dotnet test --filter Category!=Defect</c> runs the others.
/// </summary>
internal static class DefectTraits
{
    public const string Category = "Category";
    public const string Defect = "Defect";
}
