namespace FanOut.Lab.Reports.Charts;

/// <summary>One bar of a horizontal bar chart.</summary>
/// <param name="Label">The row label.</param>
/// <param name="Value">The bar's length.</param>
/// <param name="Color">A CSS colour.</param>
/// <param name="Error">Half-width of the error bar, or null.</param>
/// <param name="Reference">A value to mark beside the bar (the seed's figure), or null.</param>
/// <param name="Text">The value as text, printed after the bar.</param>
public sealed record Bar(string Label, double Value, string Color, double? Error = null, double? Reference = null, string? Text = null);
