using FanOut.Coyote.Tests.Infrastructure;

using Xunit.Abstractions;

namespace FanOut.Coyote.Tests.Scenarios;

/// <summary>Streams with lagging consumers beside other users of the limit: the limit holds, and a lag never holds a permit another user waits for.</summary>
public sealed class StreamTests(ITestOutputHelper output)
{
    [Fact]
    public async Task FanOutStream_LaggingConsumerBesideAnotherCallOnFixedTwo_StaysWithinItAndYieldsEachRowOnce()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(2);
            var occupancy = new Occupancy(limit);
            var rows = new Settlement("stream", 3 + schedule.Next(5));
            var other = new Settlement("other call", 2 + schedule.Next(4));
            var ordered = schedule.Chance(50);
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {rows} (ordered: {ordered}); {other}";
            var options = new FanOutOptions { Limit = limit, Ordered = ordered };
            var body = Probe.Body(schedule, occupancy, rows, "stream");
            var stream = schedule.Chance(50) ? Probe.Lazy(rows.Items, schedule).FanOutStream(body, options) : rows.Items.FanOutStream(body, options);
            Task<int[]>? call = null;
            var seen = new List<int>();
            await foreach (var row in stream)
            {
                seen.Add(row);

                // The other call starts at a row of the schedule's choosing; the consumer lags at every row.
                if (call is null && schedule.Chance(40))
                {
                    call = other.Items.FanOutAsync(Probe.Body(schedule, occupancy, other, "other call"), new FanOutOptions { Limit = limit });
                }

                await Probe.PointsAsync(schedule, 4);
            }

            call ??= other.Items.FanOutAsync(Probe.Body(schedule, occupancy, other, "other call"), new FanOutOptions { Limit = limit });
            Probe.AssertResults(await call, other);
            rows.AssertEachOnce();
            if (ordered ? !seen.SequenceEqual(rows.Items) : !seen.Order().SequenceEqual(rows.Items))
            {
                throw new InvariantException($"the stream yielded [{string.Join(',', seen)}] (ordered: {ordered})");
            }

            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }

    [Fact]
    public async Task FanOutStream_ConsumerLeavesEarly_ReturnsEveryPermitToTheSharedLimit()
    {
        var exploration = await Explorer.RunAsync(async schedule =>
        {
            var limit = ConcurrencyLimit.Fixed(2);
            var occupancy = new Occupancy(limit);
            var rows = new Settlement("stream", 4 + schedule.Next(5));
            var other = new Settlement("other call", 2 + schedule.Next(3));
            schedule.Describe = () => $"InFlight {limit.InFlight}, in use {occupancy.Current}; {rows}; {other}";
            var options = new FanOutOptions { Limit = limit, Ordered = schedule.Chance(50) };
            var call = other.Items.FanOutAsync(Probe.Body(schedule, occupancy, other, "other call"), new FanOutOptions { Limit = limit });
            var leaveAfter = 1 + schedule.Next(3);
            var read = 0;
            await foreach (var row in rows.Items.FanOutStream(Probe.Body(schedule, occupancy, rows, "stream"), options))
            {
                await Probe.PointsAsync(schedule, 2);
                if (++read == leaveAfter)
                {
                    break; // disposes the enumerator: the run is canceled, its workers stop
                }
            }

            Probe.AssertResults(await call, other);
            rows.AssertAtMostOnce();
            Probe.AssertQuiet(limit, occupancy);
        });

        output.WriteLine(exploration.Summary);
        Assert.True(exploration.Passed, exploration.Summary);
    }
}
