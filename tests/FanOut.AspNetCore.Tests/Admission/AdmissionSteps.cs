using FanOut.AspNetCore.Admission;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>The steps the admission's tests repeat: admitting requests that find a permit free, giving every permit back.</summary>
internal static class AdmissionSteps
{
    /// <summary>Admits <paramref name="count"/> requests of <paramref name="priority"/>, asserting each is admitted at once (no wait).</summary>
    public static async Task AdmitAtOnceAsync(this RequestAdmission admission, RequestPriority priority, int count = 1)
    {
        for (var i = 0; i < count; i++)
        {
            var status = admission.AdmitAsync(priority, default);
            Assert.True(status.IsCompleted, $"request {i + 1} of {count} ({priority}) waited instead of being admitted at once");
            Assert.Equal(AdmissionStatus.Admitted, await status);
        }
    }

    /// <summary>Gives back the <paramref name="count"/> permits the test's requests still hold, then asserts the admission and the limit hold none.</summary>
    public static void ReleaseAll(this RequestAdmission admission, int count)
    {
        Assert.Equal(count, admission.Held);
        for (var i = 0; i < count; i++)
        {
            admission.Release();
        }

        Assert.Equal(0, admission.Held);
        Assert.Equal(0, admission.Limit.InFlight);
    }
}
