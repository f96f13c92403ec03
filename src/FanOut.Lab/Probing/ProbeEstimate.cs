using System.Globalization;

namespace FanOut.Lab.Probing;

/// <summary>What a probe will cost, worked out from the first answer's latency before any level runs.</summary>
/// <remarks>It assumes the endpoint keeps scaling (N at once give N / R per second) up to <c>--max-concurrency</c>:
/// the most a ramp of powers of two can send, each level its plan's length; plus a third for the search near the
/// capacity and the open-loop check. A real endpoint saturates sooner, so the probe usually costs less; the budget
/// (<c>--max-requests</c>) caps it either way.</remarks>
/// <param name="Requests">Requests the probe is expected to send at most, within the budget.</param>
/// <param name="Seconds">Seconds it is expected to take at most.</param>
/// <param name="Text">One line for the console.</param>
public sealed record ProbeEstimate(long Requests, double Seconds, string Text)
{
    /// <summary>The estimate for <paramref name="settings"/> when one request takes <paramref name="firstLatency"/>.</summary>
    public static ProbeEstimate For(ProbeSettings settings, TimeSpan firstLatency)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var plan = settings.Plan;
        var latency = Math.Max(firstLatency.TotalSeconds, 0.0005);
        double requests = 0;
        double seconds = 0;
        for (var n = 1; ; n = n >= settings.MaxConcurrency / 2 && n < settings.MaxConcurrency ? settings.MaxConcurrency : n * 2)
        {
            var perSecond = n / latency;
            if (settings.MaxRatePerSecond is { } pace)
            {
                perSecond = Math.Min(perSecond, pace);
            }

            var length = Math.Clamp(Math.Max(plan.MinDuration.TotalSeconds, plan.MinRequests / perSecond), plan.MinDuration.TotalSeconds, plan.MaxDuration.TotalSeconds);
            requests += perSecond * length;
            seconds += length;
            if (n >= settings.MaxConcurrency)
            {
                break;
            }
        }

        requests *= 4.0 / 3;
        seconds = (seconds * 4.0 / 3) + plan.OpenLoopDuration.TotalSeconds;
        var capped = settings.MaxRequests is { } max && requests > max;
        var total = (long)Math.Ceiling(capped ? settings.MaxRequests!.Value : requests);
        var budget = settings.MaxRequests is { } m ? $"the budget is {m.ToString("N0", CultureInfo.InvariantCulture)} (--max-requests)" : "no budget (--max-requests not set)";
        var text = $"First answer in {ProbeText.Ms(firstLatency.TotalMilliseconds)}: if the endpoint kept scaling to {settings.MaxConcurrency.ToString(CultureInfo.InvariantCulture)} at once, the probe would send up to ~{total.ToString("N0", CultureInfo.InvariantCulture)} requests in ~{seconds.ToString("0", CultureInfo.InvariantCulture)} s; {budget}{(capped ? ", which would stop it first" : string.Empty)}.";
        return new ProbeEstimate(total, seconds, text);
    }
}
