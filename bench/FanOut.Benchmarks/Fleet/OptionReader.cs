using System.Globalization;

namespace FanOut.Benchmarks.Fleet;

/// <summary>
/// The fleet commands' options, read one at a time after the command's name (<c>args[0]</c>): the option at hand, its
/// value, and the whole-number rule they share. A bad value is a <see cref="FormatException"/> naming it, which
/// <see cref="TryReadAsync"/> prints as a usage error.
/// </summary>
internal sealed class OptionReader(string[] args)
{
    private int _index;

    /// <summary>
    /// Reads every option of <paramref name="args"/> with <paramref name="read"/> (a switch on <see cref="Current"/> that
    /// throws <see cref="FormatException"/> for a bad one); on the first bad one, writes <c>command: why</c> and returns false
    /// (the command then exits 2, a usage error).
    /// </summary>
    public static async Task<bool> TryReadAsync(string command, string[] args, TextWriter output, Action<OptionReader> read)
    {
        var option = new OptionReader(args);
        try
        {
            while (option.MoveNext())
            {
                read(option);
            }

            return true;
        }
        catch (FormatException e)
        {
            await output.WriteLineAsync($"{command}: {e.Message}");
            return false;
        }
    }

    /// <summary>The option at hand.</summary>
    public string Current => args[_index];

    /// <summary>True when an argument follows the option at hand (its value).</summary>
    public bool HasValue => _index + 1 < args.Length;

    /// <summary>Moves to the next option; false after the last.</summary>
    public bool MoveNext() => ++_index < args.Length;

    /// <summary>The option's value: the next argument (check <see cref="HasValue"/> first).</summary>
    public string Value() => args[++_index];

    /// <summary>The option's value as a whole number of at least <paramref name="min"/>.</summary>
    /// <exception cref="FormatException">The value is missing, not a whole number, or below <paramref name="min"/>.</exception>
    public int Number(int min) => HasValue && int.TryParse(args[++_index], NumberStyles.None, CultureInfo.InvariantCulture, out var n) && n >= min
        ? n : throw new FormatException($"{args[_index - 1]} needs a whole number >= {min}");
}
