using System.Globalization;
using System.Net;

using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Probing;

/// <summary>How one request ended.</summary>
/// <param name="Ok">A status below 400.</param>
/// <param name="FailureKind">Null when ok; else the status code, <c>"timeout"</c> or <c>"socket"</c>.</param>
/// <param name="NamesRateLimit">A rejection whose headers named a rate limit.</param>
/// <param name="Interrupted">Cancelled by Ctrl+C, SIGTERM or <c>--duration</c>: not a measurement.</param>
/// <param name="Error">For failures without an answer, the exception (for the reachability check's message).</param>
internal readonly record struct SendOutcome(bool Ok, string? FailureKind, bool NamesRateLimit, bool Interrupted, Exception? Error)
{
    /// <summary>The server said it was overloaded: 429 or 503.</summary>
    public bool IsRejection => FailureKind is "429" or "503";

    /// <summary>An answer with <paramref name="status"/>.</summary>
    public static SendOutcome Answered(HttpStatusCode status, bool namesRateLimit) => (int)status < 400
        ? new(true, null, false, false, null)
        : new(false, ((int)status).ToString(CultureInfo.InvariantCulture), namesRateLimit, false, null);

    /// <summary>No answer within the timeout.</summary>
    public static SendOutcome TimedOut(Exception error) => new(false, ItemOutcomes.Timeout, false, false, error);

    /// <summary>The connection failed (refused, reset, name or TLS error).</summary>
    public static SendOutcome SocketFailed(Exception error) => new(false, ItemOutcomes.Socket, false, false, error);

    /// <summary>Cancelled from outside.</summary>
    public static SendOutcome Cancelled { get; } = new(false, null, false, true, null);

    /// <summary>Sends one request from <paramref name="target"/> through <paramref name="client"/>, reading the whole answer.</summary>
    public static async Task<SendOutcome> SendAsync(ProbeTarget target, HttpClient client, CancellationToken cancellationToken)
    {
        using var request = target.CreateRequest();
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(target.Settings.Timeout);
        try
        {
            using var response = await client.SendAsync(request, HttpCompletionOption.ResponseContentRead, timeout.Token).ConfigureAwait(false);
            var rejected = response.StatusCode is HttpStatusCode.TooManyRequests or HttpStatusCode.ServiceUnavailable;
            return Answered(response.StatusCode, rejected && ProbeTarget.NamesRateLimit(response.Headers));
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return Cancelled;
        }
        catch (OperationCanceledException ex)
        {
            return TimedOut(ex);
        }
        catch (Exception ex) when (ex is HttpRequestException or IOException)
        {
            return SocketFailed(ex);
        }
    }
}
