using System.Diagnostics;
using System.Globalization;
using System.Text.Json;

using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads;
using FanOut.Redis;
using FanOut.Redis.FleetWorker;

namespace FanOut.Lab.Fleet;

/// <summary>
/// K worker processes (<c>FanOut.Redis.FleetWorker</c>), each running FanOutAsync over its share of the items with either one
/// shared <c>RedisConcurrencyLimit</c> of <see cref="Limit"/> or a local <c>ConcurrencyLimit.Fixed(Limit)</c> of its own.
/// The workers connect, say <c>ready</c>, and start together when all are ready.
/// </summary>
public sealed class FleetStrategy : Strategy
{
    private const string ReportPrefix = "report ";
    private readonly bool _shared;
    private readonly string? _adaptiveName;

    private FleetStrategy(int limit, bool shared, string? adaptiveName = null)
    {
        Limit = CheckLimit(limit, nameof(limit));
        _shared = shared;
        _adaptiveName = adaptiveName;
    }

    /// <summary>The limit: fleet-wide when shared, per process otherwise.</summary>
    public int Limit { get; }

    /// <summary>Every worker shares one Redis limit of <paramref name="limit"/>.</summary>
    public static FleetStrategy SharedRedis(int limit) => new(limit, shared: true);

    /// <summary>Every worker shares one adaptive Redis budget, told nothing (default bounds); <paramref name="name"/> tells rows apart.</summary>
    public static FleetStrategy SharedAdaptive(string name) => new(AdaptiveBudgetOptions.DefaultMaxBudget, shared: true, name);

    /// <summary>Every worker has a local Fixed(<paramref name="limit"/>) of its own.</summary>
    public static FleetStrategy LocalFixed(int limit) => new(limit, shared: false);

    /// <inheritdoc/>
    public override string Name => _adaptiveName ?? (_shared ? $"FanOut, shared Redis({Limit}) per fleet" : $"FanOut, Fixed({Limit}) per process");

    /// <inheritdoc/>
    public override WorkloadForms Needs => WorkloadForms.Asynchronous;

    /// <inheritdoc/>
    /// <remarks>The limit as configured (per process for local limits); the fleet workload has no fixed wait, so no ideal time depends on it.</remarks>
    public override int ConcurrencyFor(int itemCount) => Math.Min(itemCount, Limit);

    /// <inheritdoc/>
    public override async Task RunAsync(Workload workload, int[] items, CancellationToken cancellationToken)
    {
        if (workload is not FleetWorkload fleet)
        {
            throw new ArgumentException($"{Name} runs only {nameof(FleetWorkload)}.", nameof(workload));
        }

        ArgumentNullException.ThrowIfNull(items);
        var key = $"lab-{Guid.NewGuid():N}";
        await fleet.MarkKeyUsedAsync(key).ConfigureAwait(false);
        var processes = new List<Process>();
        try
        {
            for (var k = 0; k < fleet.Workers; k++)
            {
                var share = (items.Length / fleet.Workers) + (k < items.Length % fleet.Workers ? 1 : 0);
                processes.Add(Process.Start(StartInfo(fleet, key, share)) ?? throw new InvalidOperationException("A fleet worker did not start."));
            }

            // Everyone connected: start together.
            foreach (var process in processes)
            {
                var line = await process.StandardOutput.ReadLineAsync(cancellationToken).ConfigureAwait(false);
                if (line != "ready")
                {
                    throw new InvalidOperationException($"A fleet worker failed to start: {line} {await process.StandardError.ReadToEndAsync(cancellationToken).ConfigureAwait(false)}");
                }
            }

            if (_adaptiveName is not null)
            {
                await fleet.StartTraceAsync(key, items.Length).ConfigureAwait(false);
            }

            foreach (var process in processes)
            {
                await process.StandardInput.WriteLineAsync("go").ConfigureAwait(false);
                await process.StandardInput.FlushAsync(cancellationToken).ConfigureAwait(false);
            }

            foreach (var process in processes)
            {
                fleet.Add(await ReadReportAsync(process, cancellationToken).ConfigureAwait(false));
            }

            await fleet.StopTraceAsync().ConfigureAwait(false);
        }
        finally
        {
            foreach (var process in processes)
            {
                if (!process.HasExited)
                {
                    process.Kill(entireProcessTree: true);
                    await process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
                }

                process.Dispose();
            }
        }
    }

    private static async Task<WorkerReport> ReadReportAsync(Process process, CancellationToken cancellationToken)
    {
        var output = await process.StandardOutput.ReadToEndAsync(cancellationToken).ConfigureAwait(false);
        var errors = await process.StandardError.ReadToEndAsync(cancellationToken).ConfigureAwait(false);
        await process.WaitForExitAsync(cancellationToken).ConfigureAwait(false);
        var line = output.Split('\n').FirstOrDefault(l => l.StartsWith(ReportPrefix, StringComparison.Ordinal));
        var report = line is null ? null : JsonSerializer.Deserialize(line[ReportPrefix.Length..], WorkerJsonContext.Default.WorkerReport);
        if (report is null || report.Error is not null)
        {
            throw new InvalidOperationException($"A fleet worker failed (exit {process.ExitCode}): {report?.Error ?? output + errors}");
        }

        return report;
    }

    private ProcessStartInfo StartInfo(FleetWorkload fleet, string key, int items)
    {
        var host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } dotnet ? dotnet : "dotnet";
        var info = new ProcessStartInfo(host)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        info.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "FanOut.Redis.FleetWorker.dll"));
        string[] arguments =
        [
            "--url", fleet.ServerAddress.ToString(), "--items", items.ToString(CultureInfo.InvariantCulture),
            "--budget", Limit.ToString(CultureInfo.InvariantCulture), "--key", key, "--wait-for-go",
        ];
        foreach (var argument in arguments)
        {
            info.ArgumentList.Add(argument);
        }

        if (_adaptiveName is not null)
        {
            info.ArgumentList.Add("--adaptive");
        }

        if (_shared)
        {
            info.ArgumentList.Add("--redis");
            info.ArgumentList.Add(fleet.RedisEndpoint ?? throw new InvalidOperationException("The shared limit needs the case's redis-server."));
        }
        else
        {
            info.ArgumentList.Add("--local");
        }

        return info;
    }
}
