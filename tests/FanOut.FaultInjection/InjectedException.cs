namespace FanOut.FaultInjection;

/// <summary>What an injected fault throws, so a check can tell it from a real bug.</summary>
public sealed class InjectedException(string message) : Exception(message);
