using System.Diagnostics.Metrics;
using System.Globalization;
using System.Net.Sockets;

using FanOut.Redis.Diagnostics;

namespace FanOut.Redis.FleetWorker.Soak;

/// <summary>
/// The worker's side of the soak (<c>--soak PORT</c>): asks <see cref="SoakCounter"/> for items and runs them with
/// FanOutAsync under the shared limit, reporting each item's start and end; a failed run gives its unstarted items back.
/// </summary>
internal static class SoakWorker
{
    public static async Task<int> RunAsync(ConcurrencyLimit limit, int port, int holdMs, System.Threading.RateLimiting.RateLimiter? rate = null)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(System.Net.IPAddress.Loopback, port);
        var stream = client.GetStream();
        using var reader = new StreamReader(stream);
        await using var writer = new StreamWriter(stream) { AutoFlush = true, NewLine = "\n" };
        using var gate = new SemaphoreSlim(1);
        long lost = 0, lostReported = 0;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Name == RedisLimitInstruments.Lost)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref lost, value));
        listener.Start();

        // One request at a time on the connection; an item's report is answered before its body runs or its permit goes back.
        async Task<string> Ask(string line)
        {
            await gate.WaitAsync();
            try
            {
                await writer.WriteLineAsync(line);
                return await reader.ReadLineAsync() ?? throw new IOException("the soak ended the connection");
            }
            finally
            {
                gate.Release();
            }
        }

        await Ask(string.Create(CultureInfo.InvariantCulture, $"h {Environment.ProcessId}"));
        // Leases the renewal found gone and could not re-add (their items run on without one): reported with each batch.
        async Task ReportLost()
        {
            var now = Interlocked.Read(ref lost);
            if (now != lostReported)
            {
                await Ask(string.Create(CultureInfo.InvariantCulture, $"l {now - lostReported}"));
                lostReported = now;
            }
        }

        while (true)
        {
            await ReportLost();
            var batch = await Ask("n");
            if (!batch.StartsWith("b ", StringComparison.Ordinal))
            {
                break;
            }

            var ids = batch[2..].Split(',').Select(t => long.Parse(t, CultureInfo.InvariantCulture)).ToArray();
            var started = new bool[ids.Length];
            try
            {
                await Enumerable.Range(0, ids.Length).FanOutAsync(
                    async (i, token) =>
                    {
                        await Ask(string.Create(CultureInfo.InvariantCulture, $"s {ids[i]}"));
                        started[i] = true;
                        try
                        {
                            await Task.Delay(1 + Random.Shared.Next(holdMs), token);
                        }
                        finally
                        {
                            await Ask(string.Create(CultureInfo.InvariantCulture, $"e {ids[i]}"));
                        }
                    },
                    new FanOutOptions { Limit = limit, RateLimiter = rate });
            }
            catch (Exception e) when (e is not IOException and not SocketException)
            {
                var failure = e is AggregateException { InnerException: { } inner } ? inner : e;
                await Ask("f " + failure.GetType().Name);
                var unstarted = ids.Where((_, i) => !Volatile.Read(ref started[i])).ToArray();
                if (unstarted.Length > 0)
                {
                    await Ask("u " + string.Join(',', unstarted));
                }

                // Under Fail a known outage fails the next run at once: do not spin on it.
                await Task.Delay(50);
            }
        }

        await ReportLost();
        return 0;
    }
}
