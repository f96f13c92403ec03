namespace FanOut.Redis.Tests.Infrastructure.FakeClock;

/// <summary>
/// A test class's <see cref="FakeClockRedisServer"/> (none where one cannot start: its tests are skipped). Each run takes
/// the clock on from where the last one left it (<see cref="NextStart"/>), so the server's time never goes back.
/// </summary>
public sealed class FakeClockRedisFixture : IAsyncLifetime
{
    private static readonly DateTimeOffset s_start = new(2030, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private FakeClockRedisServer? _server;

    /// <summary>The server.</summary>
    /// <exception cref="InvalidOperationException">It could not start here (the test should have been skipped).</exception>
    public FakeClockRedisServer Server => _server ?? throw new InvalidOperationException(FakeClockRedisServer.MissingReason);

    /// <summary>A time after every time the server has read so far: where a new run's fake clock starts.</summary>
    public DateTimeOffset NextStart() => Server.Now + TimeSpan.FromMinutes(1);

    public async Task InitializeAsync()
    {
        if (FakeClockRedisServer.MissingReason is null)
        {
            _server = await FakeClockRedisServer.StartAsync(s_start);
        }
    }

    public async Task DisposeAsync()
    {
        if (_server is not null)
        {
            await _server.DisposeAsync();
        }
    }
}
