using System.Text;

using FanOut.Lab.Reports.Charts;
using FanOut.Lab.Results;

namespace FanOut.Lab.Reports.Html;

/// <summary>A <see cref="ResultTable.Table"/> as an HTML table (readable without JavaScript), headers explained by each column's legend on hover.</summary>
public static class HtmlTable
{
    /// <summary>Appends <paramref name="table"/>.</summary>
    public static void Append(StringBuilder html, ResultTable.Table table)
    {
        ArgumentNullException.ThrowIfNull(html);
        ArgumentNullException.ThrowIfNull(table);
        html.Append("<div class=\"table-wrap\"><table><thead><tr>");
        for (var i = 0; i < table.Headers.Count; i++)
        {
            var legend = table.Columns[i].Legend;
            html.Append(legend is null ? "<th>" : $"<th title=\"{Svg.Text(legend)}\">").Append(Svg.Text(table.Headers[i])).Append("</th>");
        }

        html.Append("</tr></thead><tbody>");
        foreach (var row in table.Rows)
        {
            html.Append("<tr>");
            for (var i = 0; i < row.Count; i++)
            {
                html.Append(table.RightAligned(i) ? "<td class=\"num\">" : "<td>").Append(Svg.Text(row[i])).Append("</td>");
            }

            html.Append("</tr>");
        }

        html.Append("</tbody></table></div>");
    }
}
