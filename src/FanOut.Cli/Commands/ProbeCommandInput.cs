namespace FanOut.Cli.Commands;

/// <summary>The raw values of <c>fanout probe</c>'s argument and options, as parsed.</summary>
/// <param name="Url">The URL argument.</param>
/// <param name="Method"><c>--method</c>.</param>
/// <param name="Headers"><c>--header</c>, every occurrence.</param>
/// <param name="BodyFile"><c>--body-file</c>.</param>
/// <param name="MaxConcurrency"><c>--max-concurrency</c>.</param>
/// <param name="MaxRequests"><c>--max-requests</c>.</param>
/// <param name="Duration"><c>--duration</c>, seconds.</param>
/// <param name="Timeout"><c>--timeout</c>, seconds.</param>
/// <param name="SloP99"><c>--slo-p99</c>, milliseconds.</param>
/// <param name="MaxRate"><c>--max-rate</c>, requests per second.</param>
/// <param name="Insecure"><c>--insecure</c>.</param>
/// <param name="CaFile"><c>--ca-file</c>.</param>
/// <param name="Out"><c>--out</c>.</param>
/// <param name="Json"><c>--json</c>.</param>
public sealed record ProbeCommandInput(
    string Url,
    string? Method,
    IReadOnlyList<string> Headers,
    string? BodyFile,
    double? MaxConcurrency,
    double? MaxRequests,
    double? Duration,
    double? Timeout,
    double? SloP99,
    string? Out,
    bool Json,
    double? MaxRate = null,
    bool Insecure = false,
    string? CaFile = null);
