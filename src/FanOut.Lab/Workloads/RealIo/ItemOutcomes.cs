using System.Diagnostics;
using System.Net.Sockets;

using FanOut.Lab.Measurement;

namespace FanOut.Lab.Workloads.RealIo;

/// <summary>Counts how each item of a run ended and how long each successful item took, without throwing and without a lock.</summary>
/// <remarks>
/// Every item writes only its own latency slot and bumps interlocked counters, so the hot path allocates
/// nothing; percentiles are computed in <see cref="Collect"/>, after the timed window.
/// </remarks>
public sealed class ItemOutcomes
{
    /// <summary>Failure kind: the call hit its timeout.</summary>
    public const string Timeout = "timeout";

    /// <summary>Failure kind: a <see cref="SocketException"/> (refused, reset).</summary>
    public const string Socket = "socket";

    /// <summary>Failure kind: anything else.</summary>
    public const string Other = "other";

    private const int MaxStatus = 600;
    private const int TooManyRequests = 429;
    private readonly long[] _latencyTicks;
    private readonly long[] _statuses = new long[MaxStatus];
    private long _successes;
    private long _socket;
    private long _timeout;
    private long _other;

    /// <summary>Outcomes for items 0 to <paramref name="itemCount"/> - 1.</summary>
    public ItemOutcomes(int itemCount)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        _latencyTicks = new long[itemCount];
        Reset();
    }

    /// <summary>Successful items so far in this run, read without allocating (for the timeline sampler).</summary>
    public long SuccessesNow => Interlocked.Read(ref _successes);

    /// <summary>Items answered 429 so far in this run, read without allocating.</summary>
    public long TooManyRequestsNow => Interlocked.Read(ref _statuses[TooManyRequests]);

    /// <summary>Forgets the last run.</summary>
    public void Reset()
    {
        Array.Fill(_latencyTicks, -1);
        Array.Clear(_statuses);
        Volatile.Write(ref _successes, 0);
        Volatile.Write(ref _socket, 0);
        Volatile.Write(ref _timeout, 0);
        Volatile.Write(ref _other, 0);
    }

    /// <summary>Item <paramref name="index"/>, started at <paramref name="startTimestamp"/>, succeeded.</summary>
    public void Succeeded(int index, long startTimestamp)
    {
        _latencyTicks[index] = Stopwatch.GetTimestamp() - startTimestamp;
        Interlocked.Increment(ref _successes);
    }

    /// <summary>An item got a non-success HTTP answer.</summary>
    public void FailedWithStatus(int statusCode) =>
        Interlocked.Increment(ref _statuses[Math.Clamp(statusCode, 0, MaxStatus - 1)]);

    /// <summary>An item failed with <paramref name="exception"/>; counted by kind.</summary>
    public void Failed(Exception exception)
    {
        switch (Classify(exception))
        {
            case Timeout:
                Interlocked.Increment(ref _timeout);
                break;
            case Socket:
                Interlocked.Increment(ref _socket);
                break;
            default:
                Interlocked.Increment(ref _other);
                break;
        }
    }

    /// <summary>The kind of a failure: <see cref="Timeout"/>, <see cref="Socket"/> or <see cref="Other"/>.</summary>
    /// <remarks>HttpClient reports its own timeout as a TaskCanceledException wrapping a TimeoutException; any other
    /// cancellation reaching here came from a per-call token, which is also a timeout (the run's own token is rethrown
    /// by the workloads before they count).</remarks>
    public static string Classify(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        if (exception is OperationCanceledException)
        {
            return Timeout;
        }

        for (var e = exception; e is not null; e = e.InnerException)
        {
            if (e is SocketException)
            {
                return Socket;
            }
        }

        return Other;
    }

    /// <summary>The run's outcomes; <paramref name="elapsedMs"/> turns successes into a rate.</summary>
    public IoRunMetrics Collect(double elapsedMs)
    {
        var latencies = _latencyTicks.Where(t => t >= 0).Select(t => t * 1000.0 / Stopwatch.Frequency).ToArray();
        Array.Sort(latencies);
        var byStatus = new Dictionary<int, long>();
        for (var code = 0; code < MaxStatus; code++)
        {
            if (_statuses[code] > 0)
            {
                byStatus[code] = _statuses[code];
            }
        }

        var successes = Interlocked.Read(ref _successes);
        return new IoRunMetrics
        {
            Successes = successes,
            FailuresByStatus = byStatus,
            FailuresSocket = Interlocked.Read(ref _socket),
            FailuresTimeout = Interlocked.Read(ref _timeout),
            FailuresOther = Interlocked.Read(ref _other),
            LatencyP50Ms = Percentile(latencies, 0.50),
            LatencyP95Ms = Percentile(latencies, 0.95),
            LatencyP99Ms = Percentile(latencies, 0.99),
            SuccessesPerSecond = elapsedMs > 0 ? successes * 1000.0 / elapsedMs : 0,
        };
    }

    /// <summary>The nearest-rank percentile of sorted <paramref name="sorted"/>, or null when empty.</summary>
    internal static double? Percentile(double[] sorted, double p)
    {
        if (sorted.Length == 0)
        {
            return null;
        }

        var rank = (int)Math.Ceiling(p * sorted.Length);
        return sorted[Math.Clamp(rank - 1, 0, sorted.Length - 1)];
    }
}
