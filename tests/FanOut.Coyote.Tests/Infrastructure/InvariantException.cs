namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>An invariant of the permit protocol that a schedule broke.</summary>
public sealed class InvariantException(string message) : Exception(message);
