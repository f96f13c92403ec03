namespace FanOut.Tests.Limits;

/// <summary>Issue 17 item 7: a waiter granted while it registers on its token leaves no registration behind.</summary>
public sealed class PermitWaiterTests
{
    [Fact]
    public async Task PermitWaiter_GrantedBeforeItRegisters_LeavesNoRegistration()
    {
        // The race, made deterministic: Drain grants the waiter between its enqueueing and its Register.
        var limit = ConcurrencyLimit.Fixed(1);
        using var cts = new CancellationTokenSource();
        var waiter = new PermitWaiter(limit);
        waiter.Grant();
        waiter.Register(cts.Token);

        cts.Cancel(); // a leaked registration would run its callback now
        Assert.Equal(0, limit.StaleCancellations);
        Assert.True(await waiter.Task);
    }

    [Fact]
    public async Task WaitAsync_ContendedWaitsOnOneToken_LeaveNoRegistrations()
    {
        var limit = ConcurrencyLimit.Fixed(1);
        using var cts = new CancellationTokenSource();
        var workers = Enumerable.Range(0, 4).Select(_ => Task.Run(async () =>
        {
            for (var i = 0; i < 20_000; i++)
            {
                if (!limit.TryAcquire())
                {
                    Assert.True(await limit.WaitAsync(cts.Token));
                }

                limit.Release();
            }
        }));
        await Task.WhenAll(workers).WaitAsync(TimeSpan.FromSeconds(60));

        await cts.CancelAsync();
        Assert.Equal(0, limit.StaleCancellations);
        Assert.Equal(0, limit.InFlight);
    }
}
