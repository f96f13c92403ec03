namespace FanOut.AspNetCore;

/// <summary>What the middleware does with a request when the limit itself throws (a custom or distributed limit that failed).</summary>
public enum LimiterFailureMode
{
    /// <summary>Fail open: run the request without a permit, as the app ran before the limiter was added.</summary>
    Admit = 0,

    /// <summary>Fail closed: refuse the request with <see cref="FanOutConcurrencyOptions.RejectionStatusCode"/> and Retry-After.</summary>
    Refuse = 1,
}
