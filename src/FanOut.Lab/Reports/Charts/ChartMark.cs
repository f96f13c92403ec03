namespace FanOut.Lab.Reports.Charts;

/// <summary>A small triangle on a line chart at one point (a decision of the adaptive limit), with a tooltip.</summary>
/// <param name="X">Where along the x axis.</param>
/// <param name="Y">Where along the y axis (the value the line moved to).</param>
/// <param name="Color">A CSS colour.</param>
/// <param name="Tooltip">What hovering shows: the SVG <c>&lt;title&gt;</c> of the mark.</param>
/// <param name="Down">Points down (a decrease) rather than up.</param>
/// <param name="Kind">What the mark is, written as its <c>data-kind</c> (a reason's name, say).</param>
public sealed record ChartMark(double X, double Y, string Color, string Tooltip, bool Down, string Kind);
