namespace FanOut.AspNetCore.Admission;

/// <summary>What <see cref="RequestAdmission.AdmitAsync"/> decided for a request.</summary>
internal enum AdmissionStatus
{
    /// <summary>The request holds a permit of the limit: its owner gives it back with <see cref="ConcurrencyLimit.Release"/>.</summary>
    Admitted,

    /// <summary>The limit threw and <see cref="LimiterFailureMode.Admit"/> applies: the request runs without a permit.</summary>
    AdmittedWithoutPermit,

    /// <summary>Refused: queue full, refused at random as the queue filled, timed out in the queue, or pushed out by a higher priority.</summary>
    Refused,

    /// <summary>The client went away while the request waited: nobody to answer.</summary>
    Canceled,
}
