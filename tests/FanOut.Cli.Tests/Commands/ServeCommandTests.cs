namespace FanOut.Cli.Tests.Commands;

/// <summary><c>fanout serve</c> with bad values: one line naming the value and its valid range, exit code 2, no server started.</summary>
public sealed class ServeCommandTests
{
    [Theory]
    [InlineData("serve --port 70000", "--port 70000 is too large", "it must be at most 65535 (and at least 0)")]
    [InlineData("serve --port -1", "--port -1 is too small", "it must be at least 0 (and at most 65535)")]
    [InlineData("serve --capacity 0", "--capacity 0 is too small", "it must be at least 1 (and at most 10000)")]
    [InlineData("serve --capacity -1", "--capacity -1 is too small", "it must be at least 1 (and at most 10000)")]
    [InlineData("serve --capacity 2.5", "--capacity 2.5 is not a whole number", "a whole number from 1 to 10000")]
    [InlineData("serve --queue -3", "--queue -3 is too small", "it must be at least 0 (and at most 100000)")]
    [InlineData("serve --rate 0", "--rate 0", "[0.01, 1000000]")]
    [InlineData("serve --rate abc", "--rate 'abc'", "requests per second")]
    [InlineData("serve --latency uniform:50-10", "'uniform:50-10'", "fixed:MS")]
    [InlineData("serve --latency bogus", "'bogus'", "lognormal:MEDIAN,p99=P99")]
    [InlineData("serve --latency constant:40", "'constant:40'", "fixed:MS | uniform:MIN-MAX | lognormal:MEDIAN,p99=P99")]
    [InlineData("serve --schedule 5s+capacity=16;2s+capacity=8", "step 2 '2s capacity=8': its time comes before the step before it", "time order")]
    [InlineData("serve --schedule 5s+capacity=0", "capacity must be in [1, 10000]; got 0.", "step 1")]
    public async Task Serve_BadValue_OneLineErrorAndExitCode2(string commandLine, string namesValue, string namesRange)
    {
        var cli = new CliHarness();
        cli.AssertUsageError(await cli.RunAsync(commandLine.Split(' ').Select(a => a.Replace('+', ' ')).ToArray()), namesValue, namesRange);
        Assert.DoesNotContain("listening", cli.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Serve_NegativeCapacity_SaysTheBoundNotThatItIsNoWholeNumber()
    {
        // Issue 26: "serve --capacity -1" said "-1 is not a whole number", which it is.
        var cli = new CliHarness();
        Assert.Equal(2, await cli.RunAsync("serve", "--capacity", "-1"));
        Assert.Equal("fanout: --capacity -1 is too small: it must be at least 1 (and at most 10000), e.g. --capacity 64.", cli.Error.ToString().Trim());
    }

    [Fact]
    public async Task Serve_GoodValues_PrintsUrlAndSettingsAndStopsOnCancel()
    {
        var cli = new CliHarness();
        using var stop = new CancellationTokenSource();
        var serving = cli.RunAsync(stop.Token, "serve", "--capacity", "8", "--queue", "4", "--rate", "100", "--latency", "fixed:5");
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (!cli.Output.Contains("listening", StringComparison.Ordinal) && DateTime.UtcNow < deadline && !serving.IsCompleted)
        {
            await Task.Delay(20);
        }

        Assert.Contains("Downstream listening on http://127.0.0.1:", cli.Output, StringComparison.Ordinal);
        Assert.Contains("capacity 8, queue 4, rate limit 100 requests/s, latency fixed:5", cli.Output, StringComparison.Ordinal);
        var url = cli.Output.Split('\n').First(l => l.Contains("listening", StringComparison.Ordinal)).Split(' ')[^1].Trim();
        using (var client = new HttpClient { Timeout = TimeSpan.FromSeconds(5) })
        {
            Assert.Contains("item-7", await client.GetStringAsync(new Uri(new Uri(url), "item/7")), StringComparison.Ordinal);
        }

        await stop.CancelAsync();
        Assert.Equal(0, await serving.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Contains("Stopped. Served 1", cli.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Serve_Schedule_AppliesItsStepsToTheRunningServer()
    {
        var cli = new CliHarness();
        using var stop = new CancellationTokenSource();
        var serving = cli.RunAsync(stop.Token, "serve", "--capacity", "8", "--schedule", "0s capacity=3 queue=0 phase=halved");
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (!cli.Output.Contains("Schedule:", StringComparison.Ordinal) && DateTime.UtcNow < deadline && !serving.IsCompleted)
        {
            await Task.Delay(20);
        }

        Assert.Contains("Schedule: 0s phase=halved capacity=3 queue=0", cli.Output, StringComparison.Ordinal);
        var url = cli.Output.Split('\n').First(l => l.Contains("listening", StringComparison.Ordinal)).Split(' ')[^1].Trim();
        using (var client = new HttpClient { Timeout = TimeSpan.FromSeconds(5) })
        {
            string stats;
            do
            {
                stats = await client.GetStringAsync(new Uri(new Uri(url), "stats"));
            }
            while (!stats.Contains("\"phase\":\"halved\"", StringComparison.Ordinal) && DateTime.UtcNow < deadline && await Task.Delay(20).ContinueWith(_ => true, TaskScheduler.Default));

            Assert.Contains("\"capacity\":3", stats, StringComparison.Ordinal);
            Assert.Contains("\"phase\":\"halved\"", stats, StringComparison.Ordinal);
        }

        await stop.CancelAsync();
        Assert.Equal(0, await serving.WaitAsync(TimeSpan.FromSeconds(10)));
    }
}
