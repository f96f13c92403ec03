using System.Globalization;

namespace FanOut.Redis.FleetWorker;

/// <summary>The worker's command line: <c>--redis HOST:PORT --key K --budget N --items N [--lease-ms MS] [--hold-ms MS] [--url URL] [--local] [--fallback N] [--adaptive] [--wait-for-go] [--soak PORT] [--replica-acks N] [--rate R [--burst B] [--acquirers N]]</c>.</summary>
internal sealed record WorkerArguments
{
    private static readonly string[] s_options = ["--redis", "--key", "--budget", "--items", "--lease-ms", "--hold-ms", "--url", "--local", "--fallback", "--adaptive", "--wait-for-go", "--soak", "--replica-acks", "--rate", "--burst", "--acquirers", "--soak-rate"];

    /// <summary>Redis's StackExchange.Redis configuration string (<c>HOST:PORT</c>, or sentinels with <c>serviceName=</c>); unused with <see cref="Local"/>.</summary>
    public string Redis { get; init; } = "127.0.0.1:6379";

    /// <summary>The shared budget's key; also names the probe counters.</summary>
    public string Key { get; init; } = "fleet";

    /// <summary>The budget (Redis) or the fixed limit (local).</summary>
    public int Budget { get; init; } = 1;

    /// <summary>Items this worker runs.</summary>
    public int Items { get; init; }

    /// <summary>Lease time in milliseconds.</summary>
    public int LeaseMs { get; init; } = 10_000;

    /// <summary>Each item waits this long (with the Redis probe counting items running fleet-wide), unless <see cref="Url"/> is set.</summary>
    public int HoldMs { get; init; }

    /// <summary>When set, each item is a <c>GET {Url}item/{i}</c> instead of a hold.</summary>
    public Uri? Url { get; init; }

    /// <summary>Use <c>ConcurrencyLimit.Fixed(Budget)</c> in this process instead of the shared Redis limit.</summary>
    public bool Local { get; init; }

    /// <summary>When above 0, fall back to a local limit of this size while Redis is unreachable.</summary>
    public int Fallback { get; init; }

    /// <summary>Share an adaptive Redis budget (told nothing: default bounds) instead of <see cref="Budget"/>; a 429 then fails the attempt, which the run retries.</summary>
    public bool Adaptive { get; init; }

    /// <summary>Print <c>ready</c> and wait for a line on standard input before starting, so a fleet starts together.</summary>
    public bool WaitForGo { get; init; }

    /// <summary>When above 0, run the soak's items from the <see cref="Soak.SoakCounter"/> on this loopback port instead of <see cref="Items"/>.</summary>
    public int SoakPort { get; init; }

    /// <summary>The limit's <c>ReplicaAcknowledgements</c>: replicas that must hold a lease-granting script's writes (<c>WAIT</c>) before its leases are used.</summary>
    public int ReplicaAcks { get; init; }

    /// <summary>When above 0, take permits from a fleet rate of this many per second (<see cref="Rates.RateWorker"/>) instead of running items.</summary>
    public int Rate { get; init; }

    /// <summary>The rate's burst (0: the rate).</summary>
    public int Burst { get; init; }

    /// <summary>With <see cref="SoakPort"/>: item starts also take a permit of a fleet rate of this many per second (burst <see cref="Burst"/>).</summary>
    public int SoakRate { get; init; }

    /// <summary>Acquisitions the rate mode keeps going at once.</summary>
    public int Acquirers { get; init; } = 64;

    /// <summary>Parses <paramref name="args"/>, or returns null with a one-line <paramref name="error"/> naming the bad value and the valid choices.</summary>
    public static WorkerArguments? Parse(string[] args, out string? error)
    {
        var parsed = new WorkerArguments();
        error = null;
        for (var i = 0; i < args.Length; i++)
        {
            var name = args[i];
            string Value() => i + 1 < args.Length ? args[++i] : throw new FormatException($"{name} needs a value");
            int Number()
            {
                var text = Value();
                return int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var n) ? n : throw new FormatException($"{name} '{text}' is not a whole number >= 0");
            }

            try
            {
                parsed = name switch
                {
                    "--redis" => parsed with { Redis = Value() },
                    "--key" => parsed with { Key = Value() },
                    "--budget" => parsed with { Budget = Number() },
                    "--items" => parsed with { Items = Number() },
                    "--lease-ms" => parsed with { LeaseMs = Number() },
                    "--hold-ms" => parsed with { HoldMs = Number() },
                    "--url" => parsed with { Url = new Uri(Value(), UriKind.Absolute) },
                    "--local" => parsed with { Local = true },
                    "--fallback" => parsed with { Fallback = Number() },
                    "--wait-for-go" => parsed with { WaitForGo = true },
                    "--adaptive" => parsed with { Adaptive = true },
                    "--soak" => parsed with { SoakPort = Number() },
                    "--replica-acks" => parsed with { ReplicaAcks = Number() },
                    "--rate" => parsed with { Rate = Number() },
                    "--burst" => parsed with { Burst = Number() },
                    "--acquirers" => parsed with { Acquirers = Number() },
                    "--soak-rate" => parsed with { SoakRate = Number() },
                    _ => throw new FormatException($"unknown option '{name}': choose from {string.Join(", ", s_options)}"),
                };
            }
            catch (FormatException e)
            {
                error = e.Message;
                return null;
            }
        }

        return parsed;
    }
}
