using System.Net;

using Microsoft.AspNetCore.Builder;

namespace FanOut.AspNetCore.Tests.Middleware;

/// <summary>One limit, one budget: the service's requests and its own outgoing calls (a FanOutAsync loop on the same database) share the permits.</summary>
public sealed class SharedLimitTests
{
    [Fact]
    public async Task SharedLimit_OutgoingCallsHoldEveryPermit_RequestsRefusedThenAdmitted()
    {
        var limit = ConcurrencyLimit.Fixed(2);
        await using var app = await TestApp.StartAsync(o => { o.Limit = limit; o.QueueLimit = 0; });
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var started = new SemaphoreSlim(0);

        var loop = Enumerable.Range(0, 2).FanOutAsync(
            async (i, ct) =>
            {
                started.Release();
                await release.Task;
            },
            new FanOutOptions { Limit = limit });
        for (var i = 0; i < 2; i++)
        {
            Assert.True(await started.WaitAsync(TimeSpan.FromSeconds(30)));
        }

        using var refused = await app.Client.GetAsync("/status/200");
        release.SetResult();
        await loop;
        await Wait.UntilAsync(() => limit.InFlight == 0, "the loop gave its permits back");
        using var admitted = await app.Client.GetAsync("/status/200");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.Equal(HttpStatusCode.OK, admitted.StatusCode);
    }

    [Fact]
    public async Task SharedLimit_RequestsAndOutgoingCallsTogether_NeverMoreThanTheLimitOnTheDependency()
    {
        var limit = ConcurrencyLimit.Fixed(3);
        var dependency = new SimulatedDependency();
        await using var app = await TestApp.StartAsync(
            o => { o.Limit = limit; o.QueuePerPermit = 100; o.RejectionStart = 1; o.QueueTimeout = TimeSpan.FromMinutes(1); o.NormalWaitPerServiceTime = 100; }, // 40 queued behind 3 permits: many service times of waiting, by design
            a => a.MapGet("/db", async () => { await dependency.CallAsync(); return "done"; }));

        var requests = Enumerable.Range(0, 40).Select(_ => app.Client.GetAsync("/db")).ToArray();
        var loop = Enumerable.Range(0, 40).FanOutAsync((i, ct) => new ValueTask(dependency.CallAsync()), new FanOutOptions { Limit = limit });
        var responses = await Task.WhenAll(requests);
        await loop;

        Assert.All(responses, r => Assert.Equal(HttpStatusCode.OK, r.StatusCode));
        Assert.Equal(80, dependency.Calls);
        Assert.InRange(dependency.Peak, 2, 3); // both sides ran at once (peak 2+), never past the one budget of 3
        foreach (var response in responses)
        {
            response.Dispose();
        }
    }
}

/// <summary>A dependency that counts the calls in it at once (a database's connections).</summary>
internal sealed class SimulatedDependency
{
    private int _inside;
    private int _peak;
    private int _calls;

    public int Peak => Volatile.Read(ref _peak);

    public int Calls => Volatile.Read(ref _calls);

    public async Task CallAsync()
    {
        var inside = Interlocked.Increment(ref _inside);
        InterlockedMax(ref _peak, inside);
        Interlocked.Increment(ref _calls);
        await Task.Delay(2);
        Interlocked.Decrement(ref _inside);
    }

    private static void InterlockedMax(ref int target, int value)
    {
        var seen = Volatile.Read(ref target);
        while (value > seen)
        {
            var previous = Interlocked.CompareExchange(ref target, value, seen);
            if (previous == seen)
            {
                return;
            }

            seen = previous;
        }
    }
}
