namespace FanOut.Lab.Reports.Charts;

/// <summary>One line of a line chart.</summary>
/// <param name="Name">The legend text.</param>
/// <param name="Color">A CSS colour.</param>
/// <param name="X">X values.</param>
/// <param name="Y">Y values, one per X.</param>
/// <param name="Dashed">Drawn dashed (a limit, a reference) rather than solid.</param>
/// <param name="Step">Drawn as a step line (a value that holds until the next sample).</param>
public sealed record Series(string Name, string Color, IReadOnlyList<double> X, IReadOnlyList<double> Y, bool Dashed = false, bool Step = false);
