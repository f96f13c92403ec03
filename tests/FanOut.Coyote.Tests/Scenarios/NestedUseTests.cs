using System.Net;

using FanOut.Coyote.Tests.Infrastructure;
using FanOut.Http;

using Xunit.Abstractions;

namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>A limit used again from inside its own work: a stream's consumer, a body's lease. It composes, or fails at once; it never hangs.</summary>
public sealed class NestedUseTests(ITestOutputHelper output)
{
    /// <summary>
    /// Issue 25: a <c>FanOutStream</c> over <c>Fixed(1)</c> whose consumer handles a row with a <c>FanOutAsync</c> on the same
    /// limit deadlocked (the worker filled the channel holding the only permit). One schedule in ten streams more rows than
    /// the completion-order channel holds (at least 1,024, <c>StreamRun.MinChannelCapacity</c>), so its worker does wait on
    /// a full channel (the ordered half waits on its window, 64 here); such a schedule costs about 10 ms, the others 0.3.
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutStream_ConsumerFansOutOnTheSameFixedOne_CompletesWithinTheLimit()
    {
        const int ChannelCapacity = 1024;
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(1);
            var occupancy = new Occupancy(limit);
            var ordered = schedule.Chance(50);
            var fills = schedule.Chance(10);
            var rows = new Settlement("stream", fills ? ChannelCapacity + 2 + schedule.Next(8) : 2 + schedule.Next(3));
            var handled = 0;
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {rows}; {handled} rows handled (ordered: {ordered})";
            var options = new FanOutOptions { Limit = limit, Ordered = ordered };

            // Most rows' bodies finish at once (the worker races ahead of the consumer); a few take scheduling points.
            Func<int, CancellationToken, ValueTask<int>> body = async (item, _) =>
            {
                rows.Started(item);
                occupancy.Enter("stream body");
                if (item < 4 || schedule.Chance(1))
                {
                    await schedule.PointAsync();
                }

                occupancy.Exit();
                rows.Settled(item);
                return item;
            };
            var stream = schedule.Chance(50) ? Probe.Lazy(rows.Items, schedule).FanOutStream(body, options) : rows.Items.FanOutStream(body, options);
            var seen = new List<int>();
            await foreach (var row in stream)
            {
                seen.Add(row);

                // A lagging consumer: now and then it lets the workers fill the channel (until the stream stops making
                // progress) before it handles its first row, so the fan-out below starts while they wait on a full channel.
                if (fills && seen.Count == 1 && schedule.Chance(50))
                {
                    for (var (stalls, last) = (0, -1); rows.SettledCount < ChannelCapacity && stalls < 100; last = rows.SettledCount)
                    {
                        stalls = rows.SettledCount == last ? stalls + 1 : 0;
                        await Task.Yield();
                    }
                }

                // The consumer fans out on the same limit for the first rows, and now and then after.
                if (seen.Count <= 2 || schedule.Chance(2))
                {
                    await Probe.PointsAsync(schedule, 3);
                    var inner = new Settlement($"row {row}", 1 + schedule.Next(2));
                    Probe.AssertResults(await inner.Items.FanOutAsync(Probe.Body(schedule, occupancy, inner, $"row {row}"), new FanOutOptions { Limit = limit }), inner);
                }

                handled++;
            }

            rows.AssertEachOnce();
            if (!seen.Order().SequenceEqual(rows.Items))
            {
                throw new InvariantException($"the stream yielded {seen.Count} rows, not each of the {rows.Items.Length} once");
            }

            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// Issue 25, item 2: a body running under a permit of L that takes an <c>L.AsRateLimiter()</c> lease either reuses the
    /// item's permit or fails at once; it never deadlocks (today the loop holds every permit and each body waits for one more).
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_BodyTakesALeaseOfItsOwnLimit_CompletesOrFailsAndReturnsEveryPermit()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(2);
            var occupancy = new Occupancy(limit);
            using var leases = limit.AsRateLimiter();

            // The lease is not counted as a permit in use: reusing the item's permit is one of the two right answers.
            await CompletesOrFailsAtOnceAsync(schedule, limit, occupancy, async (_, token) => await leases.AcquireAsync(1, token));
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// Issue 25: a FanOut loop whose bodies call an <see cref="HttpClient"/> with <c>AddFanOutLimit</c> on the same limit
    /// (docs/limits.md shares one <c>orders</c> limit that way) needed two permits per item and deadlocked once the loop held
    /// them all. The handler's send either reuses the item's permit or fails at once; the loop never hangs.
    /// </summary>
    [Fact]
    [Trait(DefectTraits.Category, DefectTraits.Defect)]
    public async Task FanOutAsync_BodySendsThroughTheHttpHandlerOnItsOwnLimit_CompletesOrFailsAndReturnsEveryPermit()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(2);
            var occupancy = new Occupancy(limit);
            var hosts = new HostConcurrencyLimits(new FanOutHttpOptions { LimitFactory = _ => limit });
            using var client = new HttpClient(new FanOutLimitHandler(hosts) { InnerHandler = new ScheduledHandler(schedule) });
            await CompletesOrFailsAtOnceAsync(schedule, limit, occupancy, async (item, token) => await client.GetAsync(new Uri($"http://orders.test/{item}"), token));
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    /// <summary>
    /// A call on <paramref name="limit"/> whose every body first takes something of the same limit (<paramref name="use"/>:
    /// a lease, a response through its handler), held while the body runs. The call completes, or fails at once (naming the
    /// limit); either way every permit comes back.
    /// </summary>
    private static async Task CompletesOrFailsAtOnceAsync(Schedule schedule, ConcurrencyLimit limit, Occupancy occupancy, Func<int, CancellationToken, Task<IDisposable>> use)
    {
        var call = new Settlement("call", 2 + schedule.Next(4));
        schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {call}";
        var body = Probe.Body(schedule, occupancy, call, "call");
        var run = call.Items.FanOutAsync(
            async (item, token) =>
            {
                using var held = await use(item, token);
                return await body(item, token);
            },
            new FanOutOptions { Limit = limit });
        try
        {
            Probe.AssertResults(await run, call);
        }
        catch (Exception e) when (e is not InvariantException)
        {
            call.AssertAtMostOnce(); // failed at once, naming the limit: also right
        }

        Probe.AssertQuiet(limit, occupancy);
    }

    /// <summary>The downstream: answers 200 after some scheduling points; no socket.</summary>
    private sealed class ScheduledHandler(Schedule schedule) : HttpMessageHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            await Probe.PointsAsync(schedule, 2);
            return new HttpResponseMessage(HttpStatusCode.OK) { RequestMessage = request };
        }
    }
}
