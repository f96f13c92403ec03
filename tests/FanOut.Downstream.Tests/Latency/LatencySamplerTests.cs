using FanOut.Downstream.Latency;

namespace FanOut.Downstream.Tests.Latency;

/// <summary>The samplers checked statistically on many draws, without HTTP (exact and fast).</summary>
public class LatencySamplerTests
{
    private static double[] Draw(LatencySpec spec, int count, int seed = 7)
    {
        var sampler = new LatencySampler(spec, seed);
        var samples = new double[count];
        for (var i = 0; i < count; i++)
        {
            samples[i] = sampler.NextMilliseconds();
        }

        return samples;
    }

    /// <summary>Nearest-rank percentile of <paramref name="samples"/> (sorts a copy).</summary>
    internal static double Percentile(IEnumerable<double> samples, double percentile)
    {
        var sorted = samples.Order().ToArray();
        var rank = (int)Math.Ceiling(percentile / 100 * sorted.Length);
        return sorted[Math.Max(rank, 1) - 1];
    }

    [Fact]
    public void NextMilliseconds_Fixed_AlwaysReturnsTheValue()
        => Assert.All(Draw(new FixedLatency(20), 1_000), sample => Assert.Equal(20, sample));

    [Fact]
    public void NextMilliseconds_Uniform_StaysInRangeAndCoversIt()
    {
        var samples = Draw(new UniformLatency(10, 50), 100_000);

        Assert.All(samples, sample => Assert.InRange(sample, 10, 50));
        Assert.InRange(samples.Average(), 29.5, 30.5);        // mean 30; its standard error here is 0.04
        Assert.InRange(samples.Min(), 10, 10.1);
        Assert.InRange(samples.Max(), 49.9, 50);
        Assert.InRange(Percentile(samples, 25), 19.5, 20.5);  // quartiles of U(10, 50) are 20 and 40
        Assert.InRange(Percentile(samples, 75), 39.5, 40.5);
    }

    [Fact]
    public void NextMilliseconds_LogNormal_HasTheGivenMedianAndP99()
    {
        var samples = Draw(new LogNormalLatency(20, 80), 200_000);

        // Standard errors at n = 200,000: median 0.2%, p99 0.5%; tolerances are 10x those.
        Assert.InRange(Percentile(samples, 50), 20 * 0.98, 20 * 1.02);
        Assert.InRange(Percentile(samples, 99), 80 * 0.95, 80 * 1.05);
        Assert.All(samples, sample => Assert.True(sample > 0));
    }

    [Theory]
    [InlineData("fixed:20")]
    [InlineData("uniform:10-50")]
    [InlineData("lognormal:20,p99=80")]
    [InlineData("lognormal:10,p99=40")]
    [InlineData("lognormal:5,p99=50")]
    public void MeanMilliseconds_IsTheMeanOfManyDraws(string text)
    {
        var spec = LatencySpec.Parse(text);

        var mean = Draw(spec, 400_000).Average();

        // The log-normal mean is above the median (exp(sigma^2 / 2) times it): a slot serves 1000 / mean requests a second.
        // Standard error at n = 400,000: under 0.2% for p99 = 10 x median; the tolerance is 2%.
        Assert.InRange(mean, spec.MeanMilliseconds * 0.98, spec.MeanMilliseconds * 1.02);
    }

    [Fact]
    public void MeanMilliseconds_LogNormal_IsAboveTheMedian()
        => Assert.Equal(20 * Math.Exp(Math.Pow(Math.Log(4) / LogNormalLatency.Z99, 2) / 2), new LogNormalLatency(20, 80).MeanMilliseconds, 9);

    [Fact]
    public void NextMilliseconds_SameSeed_GivesTheSameSequence()
    {
        var spec = new LogNormalLatency(20, 80);

        Assert.Equal(Draw(spec, 100, seed: 3), Draw(spec, 100, seed: 3));
        Assert.NotEqual(Draw(spec, 100, seed: 3), Draw(spec, 100, seed: 4));
    }

    [Fact]
    public async Task NextMilliseconds_ConcurrentCallers_DrawExactlyTheSeededSamples()
    {
        // An unguarded Random corrupts its state under concurrent use (it starts returning 0s and
        // repeats); with the lock, four threads together draw exactly the sequential multiset.
        const int PerThread = 50_000;
        var spec = new UniformLatency(0, 100);
        var expected = Draw(spec, 4 * PerThread, seed: 11).Order().ToArray();
        var sampler = new LatencySampler(spec, 11);

        var parts = await Task.WhenAll(Enumerable.Range(0, 4).Select(_ => Task.Run(() =>
        {
            var part = new double[PerThread];
            for (var i = 0; i < PerThread; i++)
            {
                part[i] = sampler.NextMilliseconds();
            }

            return part;
        })));

        Assert.Equal(expected, parts.SelectMany(part => part).Order().ToArray());
    }
}
