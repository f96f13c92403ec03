using FanOut.Downstream.Endpoints;

namespace FanOut.Downstream.Tests.Endpoints;

/// <summary>The slots and queue, resized while requests hold them; no HTTP, no clock.</summary>
public class AdmissionGateTests
{
    [Fact]
    public async Task Resize_CapacityLoweredUnderHeldSlots_KeepsThemAndAdmitsNoneUntilBelowTheNewCapacity()
    {
        var gate = new AdmissionGate(capacity: 4, queueLimit: 0);
        for (var i = 0; i < 4; i++)
        {
            Assert.True(await gate.EnterAsync(CancellationToken.None));
        }

        gate.Resize(capacity: 2, queueLimit: 0);

        Assert.False(await gate.EnterAsync(CancellationToken.None));   // 4 served, capacity 2
        gate.Exit();
        gate.Exit();
        Assert.False(await gate.EnterAsync(CancellationToken.None));   // 2 served: still full
        gate.Exit();
        Assert.True(await gate.EnterAsync(CancellationToken.None));    // 1 served: room for one
        Assert.False(await gate.EnterAsync(CancellationToken.None));
    }

    [Fact]
    public async Task Resize_CapacityRaised_AdmitsWaitersOldestFirst()
    {
        var gate = new AdmissionGate(capacity: 1, queueLimit: 3);
        Assert.True(await gate.EnterAsync(CancellationToken.None));
        var first = gate.EnterAsync(CancellationToken.None).AsTask();
        var second = gate.EnterAsync(CancellationToken.None).AsTask();
        var third = gate.EnterAsync(CancellationToken.None).AsTask();
        Assert.Equal(3, gate.Queued);

        gate.Resize(capacity: 3, queueLimit: 3);

        Assert.True(await first.WaitAsync(TestServer.ClientTimeout));
        Assert.True(await second.WaitAsync(TestServer.ClientTimeout));
        Assert.False(third.IsCompleted);
        Assert.Equal(1, gate.Queued);
        gate.Exit();
        Assert.True(await third.WaitAsync(TestServer.ClientTimeout));
        Assert.Equal(0, gate.Queued);
    }

    [Fact]
    public async Task Resize_QueueShortened_TurnsAwayTheNewestWaiters()
    {
        var gate = new AdmissionGate(capacity: 1, queueLimit: 3);
        Assert.True(await gate.EnterAsync(CancellationToken.None));
        var oldest = gate.EnterAsync(CancellationToken.None).AsTask();
        var middle = gate.EnterAsync(CancellationToken.None).AsTask();
        var newest = gate.EnterAsync(CancellationToken.None).AsTask();

        gate.Resize(capacity: 1, queueLimit: 1);

        Assert.False(await newest.WaitAsync(TestServer.ClientTimeout));
        Assert.False(await middle.WaitAsync(TestServer.ClientTimeout));
        Assert.False(oldest.IsCompleted);
        gate.Exit();
        Assert.True(await oldest.WaitAsync(TestServer.ClientTimeout));
    }

    [Fact]
    public async Task EnterAsync_WaiterCancelled_LeavesTheQueueAndTakesNoSlot()
    {
        var gate = new AdmissionGate(capacity: 1, queueLimit: 2);
        Assert.True(await gate.EnterAsync(CancellationToken.None));
        using var cancel = new CancellationTokenSource();
        var cancelled = gate.EnterAsync(cancel.Token).AsTask();
        var waiting = gate.EnterAsync(CancellationToken.None).AsTask();

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => cancelled.WaitAsync(TestServer.ClientTimeout));
        Assert.Equal(1, gate.Queued);
        gate.Exit();
        Assert.True(await waiting.WaitAsync(TestServer.ClientTimeout));                                      // the slot went to the waiter behind it
        Assert.Equal(0, gate.Queued);
    }
}
