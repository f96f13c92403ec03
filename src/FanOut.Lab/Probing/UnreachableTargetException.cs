namespace FanOut.Lab.Probing;

/// <summary>The probe's first request found no usable endpoint (no such host, refused, TLS error, timeout, an error status).</summary>
/// <remarks>Thrown before any level runs, so nothing is measured and nothing is written.</remarks>
public sealed class UnreachableTargetException : Exception
{
    /// <summary>Creates the exception with a one-line <paramref name="message"/>.</summary>
    public UnreachableTargetException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a one-line <paramref name="message"/> and its cause.</summary>
    public UnreachableTargetException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Creates the exception (for serialisers and analyzers).</summary>
    public UnreachableTargetException()
    {
    }
}
