namespace FanOut.Cli;

/// <summary>What <c>fanout</c> returns to the shell.</summary>
public static class ExitCodes
{
    /// <summary>Everything ran.</summary>
    public const int Success = 0;

    /// <summary>The run finished but some cases failed (crashed, timed out, refused); their reasons are in the table.</summary>
    public const int CasesFailed = 1;

    /// <summary><c>fanout probe</c>: the target did not answer usably (no such host, refused, TLS error, timeout, error status).</summary>
    public const int TargetUnreachable = 1;

    /// <summary><c>fanout watch</c>: could not attach (no such process, no permission, no FanOut there); the line says which.</summary>
    public const int CannotAttach = 1;

    /// <summary>The command line was wrong; nothing ran.</summary>
    public const int Usage = 2;

    /// <summary><c>fanout probe</c>: stopped before the endpoint showed its limit (<c>--max-requests</c>, <c>--duration</c>,
    /// <c>--max-concurrency</c>, <c>--max-rate</c>): "at least N", no code.</summary>
    public const int ProbeAtLeast = 3;

    /// <summary><c>fanout probe</c>: no recommendation: every level failed (e.g. an endpoint answering 503 to everything).</summary>
    public const int ProbeNoRecommendation = 4;

    /// <summary><c>fanout probe</c>: the limit was found, but the open-loop check did not hold (the queue grew or requests were rejected).</summary>
    public const int ProbeUnconfirmed = 5;

    /// <summary>Interrupted with Ctrl+C or SIGTERM; what finished is saved.</summary>
    public const int Canceled = 130;
}
