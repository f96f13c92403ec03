namespace FanOut.Lab.Scenarios;

/// <summary>The write-up a scenario reproduces: its file, its claim, and where its numbers came from.</summary>
/// <param name="File">The seed's file name under shared/seeds.</param>
/// <param name="Claim">The seed's conclusion, in its own words where possible.</param>
/// <param name="Machine">The machine and method behind its numbers.</param>
public sealed record SeedReference(string File, string Claim, string Machine);
