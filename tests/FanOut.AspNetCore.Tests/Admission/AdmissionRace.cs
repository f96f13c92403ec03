using FanOut.AspNetCore.Admission;

namespace FanOut.AspNetCore.Tests.Admission;

/// <summary>
/// Many requests admitted at once while some leave: the race the admission's single-owner rule must survive, and the
/// invariants every such race ends with (every permit and place given back, every request counted once).
/// </summary>
internal static class AdmissionRace
{
    /// <summary>
    /// Admits <paramref name="requests"/> requests on the thread pool, every third leaving after 0-6 ms; an admitted one holds
    /// its place over a yield, then releases it. Asserts that nothing is held or queued afterwards and that the admission's
    /// counts match the statuses returned.
    /// </summary>
    /// <returns>Each request's status, by index, and the most admitted requests held at once.</returns>
    public static async Task<(AdmissionStatus[] Statuses, int Peak)> RunAsync(RequestAdmission admission, ConcurrencyLimit limit, Func<int, RequestPriority> priorityOf, int requests = 2000)
    {
        var held = 0;
        var peak = 0;

        async Task<AdmissionStatus> OneAsync(int i)
        {
            using var leave = new CancellationTokenSource();
            if (i % 3 == 0)
            {
                leave.CancelAfter(i % 7);
            }

            var status = await admission.AdmitAsync(priorityOf(i), leave.Token);
            if (status == AdmissionStatus.Admitted)
            {
                var now = Interlocked.Increment(ref held);
                int seen;
                while (now > (seen = Volatile.Read(ref peak)) && Interlocked.CompareExchange(ref peak, now, seen) != seen)
                {
                }

                await Task.Yield();
                Interlocked.Decrement(ref held);
                admission.Release();
            }

            return status;
        }

        var statuses = await Task.WhenAll(Enumerable.Range(0, requests).Select(i => Task.Run(() => OneAsync(i))));

        Assert.Equal(0, limit.InFlight);
        Assert.Equal(0, admission.Held);
        Assert.Equal(0, admission.Queued);
        var counts = admission.Counts;
        Assert.Equal(statuses.Count(s => s == AdmissionStatus.Admitted), counts.AdmittedAtOnce + counts.AdmittedFromQueue);
        Assert.Equal(statuses.Count(s => s == AdmissionStatus.Canceled), counts.Canceled);
        Assert.Equal(statuses.Count(s => s == AdmissionStatus.Refused), counts.Refused);
        Assert.Equal(requests, counts.AdmittedAtOnce + counts.AdmittedFromQueue + counts.Canceled + counts.Refused);
        return (statuses, peak);
    }
}
