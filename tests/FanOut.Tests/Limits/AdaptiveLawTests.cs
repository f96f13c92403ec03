using FanOut.Tests.Infrastructure;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Tests.Limits;

/// <summary>The adaptive law for a limit whose permits live elsewhere (FanOut.Redis's fleet claims): the same decisions, with their reasons published.</summary>
public sealed class AdaptiveLawTests
{
    [Fact]
    public void OnAnswer_AnswersThatDidNotQueueThenANo_GrowsInSlowStartThenBacksOffAndPublishesEachChange()
    {
        var time = new FakeTimeProvider();
        var name = $"law-{Guid.NewGuid():N}";
        using var listener = new LimitChangeListener(name);
        var law = new AdaptiveLaw(new AdaptiveLimitOptions { InitialLimit = 4, TimeProvider = time, Name = name });

        for (var i = 0; i < 4; i++)
        {
            var start = time.GetTimestamp();
            time.Advance(TimeSpan.FromMilliseconds(10));
            Assert.Equal((5 + i, LimitChangeReason.SlowStartGrowth), law.OnAnswer(start, ItemOutcome.Succeeded, inFlight: law.Limit));
        }

        var rejected = time.GetTimestamp();
        time.Advance(TimeSpan.FromMilliseconds(1));
        Assert.Equal((6, LimitChangeReason.Overload), law.OnAnswer(rejected, ItemOutcome.Overloaded, inFlight: 8)); // 0.8 x 8
        Assert.Equal((6, LimitChangeReason.Hold), law.OnAnswer(rejected, ItemOutcome.Canceled, inFlight: 8));

        var changes = listener.Changes.OrderBy(c => c.Sequence).ToArray();
        Assert.Equal(5, changes.Length);
        Assert.All(changes, c => Assert.Equal("law", c.Kind));
        Assert.Equal((8, 6, nameof(LimitChangeReason.Overload)), (changes[^1].From, changes[^1].To, changes[^1].Reason));
    }

    [Fact]
    public void OnAnswer_NothingInFlight_ThrowsNamingTheValue()
    {
        var law = new AdaptiveLaw(new AdaptiveLimitOptions());

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => law.OnAnswer(0, ItemOutcome.Succeeded, inFlight: 0));
        Assert.Equal("inFlight", error.ParamName);
    }

    [Fact]
    public void Constructor_OptionsOutOfRange_ThrowsAsTheAdaptiveLimitDoes()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new AdaptiveLaw(new AdaptiveLimitOptions { InitialLimit = 0 }));
    }
}
