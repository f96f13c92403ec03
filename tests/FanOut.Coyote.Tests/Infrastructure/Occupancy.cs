namespace FanOut.Coyote.Tests.Infrastructure;

/// <summary>
/// Counts the permits in use that the test can see (bodies running, outside holders holding, leases held) in one counter,
/// and checks at every entry that it is within the limit's ceiling.
/// </summary>
/// <remarks>
/// <para>
/// Everyone enters after taking its permit and exits before giving it back, so the count is never above the permits
/// taken, and those never above <see cref="Ceiling"/>. The ceiling is the limit's <c>Current</c>, except after a
/// decrease: running items finish under the old value, so it stays there until <c>InFlight</c> has drained to the new one
/// (<see cref="Lowered"/>).
/// </para>
/// <para>
/// The count and the ceiling change under one lock, and an entry compares the two as they were at one instant. Read one
/// after the other, they compared a count taken before a drain with a ceiling lowered after it: a body entering third
/// under a limit of 3 just lowered to 2 counts 3, another body leaves and gives its permit back, the setter sees
/// <c>InFlight</c> 2 and lowers the ceiling, and the entry then reads 2 and reports "3 in use over 2", though at no
/// instant were 3 in use under a ceiling of 2 (about one schedule in 300,000 of the <c>Set</c> up-and-down scenario).
/// </para>
/// </remarks>
public sealed class Occupancy(ConcurrencyLimit limit)
{
    private readonly List<string> _violations = [];

    /// <summary>Guards <see cref="_current"/> and <see cref="_ceiling"/> together (test code only: nothing runs under it but arithmetic and two reads of the limit).</summary>
    private readonly Lock _gate = new();
    private int _current;
    private int _ceiling = limit.Current;
    private int _max;

    /// <summary>The most seen at once.</summary>
    public int Max => Volatile.Read(ref _max);

    /// <summary>In use right now.</summary>
    public int Current => Volatile.Read(ref _current);

    /// <summary>The most that may be in use right now.</summary>
    public int Ceiling => Volatile.Read(ref _ceiling);

    public void Enter(string who)
    {
        int now;
        int ceiling;
        lock (_gate)
        {
            now = ++_current;
            ceiling = _ceiling;
        }

        InterlockedMax(ref _max, now);
        if (now > ceiling)
        {
            Violate($"{now} permits in use at once (a {who} entered) over the limit's {ceiling} (read after the entry: Current {limit.Current}, InFlight {limit.InFlight})");
        }
    }

    public void Exit()
    {
        lock (_gate)
        {
            _current--;
        }
    }

    /// <summary>Before the limit is raised to <paramref name="value"/>: new room is allowed from now on.</summary>
    public void Raising(int value)
    {
        lock (_gate)
        {
            _ceiling = Math.Max(_ceiling, value);
        }
    }

    /// <summary>After the limit was lowered to <paramref name="value"/>: the ceiling follows once the permits have drained.</summary>
    public bool Lowered(int value)
    {
        lock (_gate)
        {
            // InFlight read under the lock: no entry counted before the drain is compared with the lowered ceiling.
            if (limit.InFlight > value || limit.Current != value)
            {
                return false;
            }

            _ceiling = value;
            return true;
        }
    }

    public void Violate(string violation)
    {
        lock (_violations)
        {
            _violations.Add(violation);
        }
    }

    /// <summary>Throws the first violation seen, if any.</summary>
    public void ThrowIfViolated()
    {
        lock (_violations)
        {
            if (_violations.Count > 0)
            {
                var more = _violations.Count > 1 ? $" (and {_violations.Count - 1} more)" : "";
                throw new InvariantException($"{_violations[0]}{more}; at the end InFlight {limit.InFlight}, most in use at once {Max}");
            }
        }
    }

    private static void InterlockedMax(ref int target, int value)
    {
        var seen = Volatile.Read(ref target);
        while (value > seen)
        {
            var previous = Interlocked.CompareExchange(ref target, value, seen);
            if (previous == seen)
            {
                return;
            }

            seen = previous;
        }
    }
}
