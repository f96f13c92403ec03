using System.CommandLine;
using System.Globalization;

namespace FanOut.Cli.Commands;

/// <summary>An optional number option whose parse error says what a valid value looks like, instead of a CLR type name.</summary>
internal static class NumberOption
{
    /// <summary>Creates <paramref name="name"/>; a value that is not a number fails with "<paramref name="name"/> 'x' is not a number: <paramref name="validChoices"/>".</summary>
    public static Option<double?> Create(string name, string description, string validChoices) => new(name)
    {
        Description = description,
        CustomParser = result =>
        {
            var token = result.Tokens.Count > 0 ? result.Tokens[0].Value : string.Empty;
            if (double.TryParse(token, NumberStyles.Float, CultureInfo.InvariantCulture, out var value))
            {
                return value;
            }

            result.AddError($"{name} '{token}' is not a number: {validChoices}");
            return null;
        },
    };
}
