using System.Text;

namespace FanOut.Lab.Reports.Html;

/// <summary>One section of report.html: the machine, the recommendations, a scenario, a probe. The page is a list of these.</summary>
/// <remarks>To render another kind of result (e.g. <c>probe.json</c>), write one more section and add it to the list
/// <see cref="HtmlReport"/> builds; the page gives it an anchor, a contents entry, the styles and the chart check.</remarks>
public interface IReportSection
{
    /// <summary>The anchor, unique in the page.</summary>
    string Id { get; }

    /// <summary>The heading and the contents entry.</summary>
    string Title { get; }

    /// <summary>Appends the section's body (below its heading) as HTML.</summary>
    void Write(StringBuilder html);
}
