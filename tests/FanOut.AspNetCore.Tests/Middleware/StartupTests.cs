using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.TestHost;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace FanOut.AspNetCore.Tests.Middleware;

/// <summary>Bad configuration stops the host at startup with one line naming the option.</summary>
public sealed class StartupTests
{
    public static TheoryData<string, Action<FanOutConcurrencyOptions>> BadOptions => new()
    {
        { "FanOutConcurrencyOptions.QueueLimit is -1", o => o.QueueLimit = -1 },
        { "FanOutConcurrencyOptions.QueuePerPermit is -0.5", o => o.QueuePerPermit = -0.5 },
        { "FanOutConcurrencyOptions.RejectionStart is 1.5", o => o.RejectionStart = 1.5 },
        { "FanOutConcurrencyOptions.PriorityReserve is 0.75", o => o.PriorityReserve = 0.75 },
        { "FanOutConcurrencyOptions.SheddableWaitPerServiceTime is -1", o => o.SheddableWaitPerServiceTime = -1 },
        { "FanOutConcurrencyOptions.SheddableWaitPerServiceTime is NaN", o => o.SheddableWaitPerServiceTime = double.NaN },
        { "FanOutConcurrencyOptions.NormalWaitPerServiceTime is 101", o => o.NormalWaitPerServiceTime = 101 },
        { "FanOutConcurrencyOptions.QueueTimeout is 00:00:00", o => o.QueueTimeout = TimeSpan.Zero },
        { "FanOutConcurrencyOptions.RejectionStatusCode is 200", o => o.RejectionStatusCode = 200 },
        { "FanOutConcurrencyOptions.RetryAfter is 00:00:00", o => o.RetryAfter = TimeSpan.Zero },
        { "FanOutConcurrencyOptions.DefaultPriority is 7", o => o.DefaultPriority = (RequestPriority)7 },
        { "FanOutConcurrencyOptions.LimiterFailure is 5", o => o.LimiterFailure = (LimiterFailureMode)5 },
    };

    [Theory]
    [MemberData(nameof(BadOptions))]
    public async Task Start_OptionOutOfRange_FailsWithOneLineNamingIt(string expected, Action<FanOutConcurrencyOptions> configure)
    {
        var failure = await Assert.ThrowsAsync<OptionsValidationException>(() => TestApp.StartAsync(configure));

        Assert.StartsWith(expected, failure.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', failure.Message);
    }

    [Fact]
    public async Task Start_EndpointWithUnknownPriority_FailsNamingTheEndpoint()
    {
        var failure = await Assert.ThrowsAsync<InvalidOperationException>(() => TestApp.StartAsync(
            _ => { },
            app => app.MapGet("/odd", () => "odd").WithMetadata(new OddPriority())));

        Assert.Contains("/odd", failure.Message, StringComparison.Ordinal);
        Assert.Contains("request priority 9", failure.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task WithRequestPriority_UnknownValue_Throws()
    {
        var failure = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => TestApp.StartAsync(
            _ => { },
            app => app.MapGet("/odd", () => "odd").WithRequestPriority((RequestPriority)9)));

        Assert.Equal("priority", failure.ParamName);
    }

    [Fact]
    public void UseFanOutConcurrency_WithoutAddFanOutConcurrency_SaysWhatToCall()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseTestServer();
        using var app = builder.Build();

        var failure = Assert.Throws<InvalidOperationException>(() => app.UseFanOutConcurrency());

        Assert.Contains("AddFanOutConcurrency", failure.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AddFanOutConcurrency_Defaults_AdaptiveLimit()
    {
        var services = new ServiceCollection().AddLogging().AddFanOutConcurrency();
        using var provider = services.BuildServiceProvider();

        var admission = provider.GetRequiredService<FanOut.AspNetCore.Admission.RequestAdmission>();

        Assert.Equal("adaptive", admission.Limit.Kind);
        Assert.Equal("server", admission.Limit.Name); // told apart from the service's outgoing limits in metrics and fanout watch
        Assert.Equal(4, admission.Limit.Current); // the server's start, not the core's 10 (docs/server.md, "The server's starting limit")
    }

    [Fact]
    public void DefaultLimitOptions_AreTheCoresButTheServersTwoParameters()
    {
        // The server's per-place parameters (docs/adaptive.md, "one law"): a start of 4 and growth that must buy throughput;
        // everything else the core's (but its name), so a user who starts from them changes one knob and keeps the rest.
        var server = FanOutConcurrencyOptions.DefaultLimitOptions;
        Assert.Equal(new AdaptiveLimitOptions() with { InitialLimit = 4, Name = "server" }, server);
        Assert.Equal(4, FanOutConcurrencyOptions.DefaultLimit(TimeProvider.System).Current);
    }

    private sealed class OddPriority : IRequestPriorityMetadata
    {
        public RequestPriority Priority => (RequestPriority)9;
    }
}
