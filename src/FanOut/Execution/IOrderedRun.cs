namespace FanOut.Execution;

/// <summary>Marks a run that honours <see cref="FanOutOptions.Ordered"/> (a stream): it needs items claimed one at a time.</summary>
internal interface IOrderedRun;
