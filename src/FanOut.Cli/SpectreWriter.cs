using System.Text;

using Spectre.Console;

namespace FanOut.Cli;

/// <summary>A <see cref="TextWriter"/> over an <see cref="IAnsiConsole"/>, so the parser's help text goes where everything else goes.</summary>
internal sealed class SpectreWriter(IAnsiConsole console) : TextWriter
{
    public override Encoding Encoding => Encoding.UTF8;

    public override void Write(char value) => console.Write(value.ToString());

    public override void Write(string? value)
    {
        if (value is not null)
        {
            console.Write(new Text(value));
        }
    }
}
