using System.Globalization;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

using FanOut.Lab.Probing;
using FanOut.Lab.Results;

namespace FanOut.Cli.Commands;

/// <summary><c>fanout probe</c>'s validated settings: what to probe, where probe.json goes, and whether to print JSON only.</summary>
/// <param name="Probe">The probe's settings.</param>
/// <param name="OutPath">The folder for probe.json.</param>
/// <param name="Json">Print the document to stdout and nothing else.</param>
public sealed record ProbeCommandSettings(ProbeSettings Probe, string OutPath, bool Json)
{
    /// <summary>True when <paramref name="url"/> names this machine (localhost, 127.0.0.0/8, ::1).</summary>
    public static bool IsLoopback(Uri url)
    {
        ArgumentNullException.ThrowIfNull(url);
        return url.IsLoopback || (System.Net.IPAddress.TryParse(url.DnsSafeHost, out var address) && System.Net.IPAddress.IsLoopback(address));
    }

    /// <summary>The methods <c>--method</c> accepts.</summary>
    public static IReadOnlyList<string> Methods { get; } = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

    /// <summary>Checks <paramref name="input"/>; returns the settings, or null with a one-line <paramref name="error"/> naming the bad value and the valid choices.</summary>
    public static ProbeCommandSettings? Validate(ProbeCommandInput input, DateTimeOffset now, out string? error)
    {
        ArgumentNullException.ThrowIfNull(input);
        error = null;
        if (!Uri.TryCreate(input.Url, UriKind.Absolute, out var url) || (url.Scheme != Uri.UriSchemeHttp && url.Scheme != Uri.UriSchemeHttps))
        {
            error = $"'{input.Url}' is not an http or https URL: give an absolute URL such as http://127.0.0.1:5080/item/1.";
            return null;
        }

        var method = (input.Method ?? "GET").ToUpperInvariant();
        if (!Methods.Contains(method))
        {
            error = $"--method '{input.Method}' is not one of {string.Join(", ", Methods)}.";
            return null;
        }

        var headers = new List<KeyValuePair<string, string>>();
        foreach (var header in input.Headers)
        {
            var colon = header.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0 || header[..colon].Trim().Length == 0 || header[..colon].Any(char.IsWhiteSpace))
            {
                error = $"--header '{header}' is not 'Name: value': use e.g. --header \"Authorization: Bearer TOKEN\".";
                return null;
            }

            headers.Add(new(header[..colon], header[(colon + 1)..].Trim()));
        }

        error = WholeNumberRange.Check("--max-concurrency", input.MaxConcurrency, 1, ProbeSettings.MaxAllowedConcurrency)
            ?? WholeNumberRange.Check("--max-requests", input.MaxRequests, 1, long.MaxValue)
            ?? Positive("--duration", input.Duration, "seconds")
            ?? Positive("--timeout", input.Timeout, "seconds")
            ?? Positive("--slo-p99", input.SloP99, "milliseconds")
            ?? Positive("--max-rate", input.MaxRate, "requests per second");
        if (error is not null)
        {
            return null;
        }

        byte[]? body = null;
        if (input.BodyFile is { } bodyFile)
        {
            try
            {
                body = File.ReadAllBytes(bodyFile);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
            {
                error = $"--body-file '{bodyFile}' cannot be read ({ex.Message.TrimEnd('.')}): give a readable file.";
                return null;
            }
        }

        X509Certificate2Collection? roots = null;
        if (input.CaFile is { } caFile)
        {
            if (input.Insecure)
            {
                error = $"--ca-file '{caFile}' and --insecure exclude each other: give one (--ca-file trusts that CA; --insecure trusts any certificate).";
                return null;
            }

            try
            {
                roots = [];
                roots.ImportFromPemFile(caFile);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or CryptographicException or NotSupportedException)
            {
                error = $"--ca-file '{caFile}' cannot be read ({ex.Message.TrimEnd('.')}): give a readable PEM file of CA certificates (-----BEGIN CERTIFICATE-----).";
                return null;
            }

            if (roots.Count == 0)
            {
                error = $"--ca-file '{caFile}' holds no certificate: give a PEM file of CA certificates (-----BEGIN CERTIFICATE-----).";
                return null;
            }
        }

        var outPath = input.Out ?? ResultsDirectory.DefaultPath(now);
        if (File.Exists(outPath))
        {
            error = $"--out '{outPath}' is a file, not a folder: give a folder for probe.json.";
            return null;
        }

        var probe = new ProbeSettings
        {
            Url = url,
            Method = new HttpMethod(method),
            Headers = headers,
            Body = body,
            MaxConcurrency = (int)(input.MaxConcurrency ?? ProbeSettings.DefaultMaxConcurrency),
            MaxRequests = input.MaxRequests is { } max ? (long)max : ProbeSettings.DefaultMaxRequests,
            MaxRatePerSecond = input.MaxRate,
            Insecure = input.Insecure,
            TrustedRoots = roots,
            Duration = input.Duration is { } duration ? TimeSpan.FromSeconds(duration) : null,
            Timeout = TimeSpan.FromSeconds(input.Timeout ?? ProbeSettings.DefaultTimeoutSeconds),
            SloP99Ms = input.SloP99,
        };
        return new ProbeCommandSettings(probe, outPath, input.Json);
    }

    private static string? Positive(string name, double? value, string unit) =>
        value is { } v && !(v > 0 && double.IsFinite(v))
            ? $"{name} {Text(v)} is not a positive number of {unit}: use e.g. {name} 30."
            : null;

    private static string Text(double value) => value.ToString(CultureInfo.InvariantCulture);
}
