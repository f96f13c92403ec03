using System.Globalization;

namespace FanOut.Lab.Reports.Charts;

/// <summary>One axis of a chart: a value range mapped onto pixels, linear or logarithmic, with readable ticks.</summary>
public sealed class Axis
{
    private const int MaxTicks = 6;
    private readonly double _min;
    private readonly double _max;
    private readonly double _from;
    private readonly double _to;

    /// <summary>An axis showing <paramref name="min"/> to <paramref name="max"/> on pixels <paramref name="from"/> to <paramref name="to"/>.</summary>
    /// <remarks>A log axis needs positive values: its minimum is raised to the largest power of ten below it.</remarks>
    public Axis(double min, double max, double from, double to, bool log)
    {
        Log = log;
        if (log)
        {
            min = Math.Pow(10, Math.Floor(Math.Log10(Math.Max(min, double.Epsilon))));
            max = Math.Pow(10, Math.Ceiling(Math.Log10(Math.Max(max, min * 10))));
        }
        else if (max <= min)
        {
            max = min + 1;
        }

        _min = min;
        _max = max;
        _from = from;
        _to = to;
    }

    /// <summary>True for a logarithmic axis.</summary>
    public bool Log { get; }

    /// <summary>True when values spanning <paramref name="min"/> to <paramref name="max"/> read better on a log axis (more than 20x apart).</summary>
    public static bool WantsLog(double min, double max) => min > 0 && max / min > 20;

    /// <summary>The pixel of <paramref name="value"/>.</summary>
    public double Map(double value)
    {
        var t = Log
            ? (Math.Log10(Math.Max(value, _min)) - Math.Log10(_min)) / (Math.Log10(_max) - Math.Log10(_min))
            : (value - _min) / (_max - _min);
        return _from + (Math.Clamp(t, 0, 1) * (_to - _from));
    }

    /// <summary>Tick values: powers of ten on a log axis, round steps on a linear one.</summary>
    public IReadOnlyList<double> Ticks()
    {
        if (Log)
        {
            var ticks = new List<double>();
            for (var v = _min; v <= _max * 1.0001; v *= 10)
            {
                ticks.Add(v);
            }

            return ticks;
        }

        var rough = (_max - _min) / MaxTicks;
        var magnitude = Math.Pow(10, Math.Floor(Math.Log10(rough)));
        var step = new[] { 1, 2, 5, 10 }.Select(m => m * magnitude).First(s => s >= rough);
        var first = Math.Ceiling(_min / step) * step;
        return Enumerable.Range(0, (int)Math.Floor((_max - first) / step) + 1).Select(i => first + (i * step)).ToArray();
    }

    /// <summary>A short label for a tick: 1.5k, 20, 0.5.</summary>
    public static string Label(double value) => Math.Abs(value) switch
    {
        >= 1_000_000 => (value / 1_000_000).ToString("0.#", CultureInfo.InvariantCulture) + "M",
        >= 1_000 => (value / 1_000).ToString("0.#", CultureInfo.InvariantCulture) + "k",
        >= 1 or 0 => value.ToString("0.#", CultureInfo.InvariantCulture),
        _ => value.ToString("0.###", CultureInfo.InvariantCulture),
    };
}
