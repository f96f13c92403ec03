using System.Globalization;
using System.Net;
using System.Net.Sockets;

namespace FanOut.Redis.FleetWorker.Soak;

/// <summary>
/// The soak's referee, independent of Redis: a loopback TCP server that hands items to the workers and counts the items
/// running at once across every process. A worker reports an item's start before its body runs and its end before the
/// permit goes back, and waits for the answer each time, so the count here is never below what really runs.
/// </summary>
/// <remarks>
/// Protocol, one line each way: <c>n</c> asks for items (<c>b ID,ID,...</c>, or <c>x</c> when the soak ends);
/// <c>s ID</c> and <c>e ID</c> report a start and an end; <c>u ID,...</c> gives back items a failed run did not start;
/// <c>f TYPE</c> reports a failed run; <c>l N</c> leases lost at renewal. Every request is answered (<c>k</c> unless said otherwise).
/// <para>Starvation, counted here too: a worker with items handed to it and not yet started (and no failed run since) that
/// starts none for longer than the starvation bound while the other workers start at least the bound's number of items
/// (the budget was in use, and went to others) is starved, once per such wait. The longest such wait that ended in a
/// start is <see cref="WorstWaitMs"/>: the time a waiting process took to get a permit while the others held the budget.
/// Starvation is a steady-state property: while a fault is being injected (<see cref="FaultBegins"/> to
/// <see cref="FaultEnds"/>: a failover that takes seconds, a kill, a restart) nobody is judged, and a wait that spans the
/// fault counts from its end, so a worker still stuck after the fleet recovered is found.</para>
/// </remarks>
public sealed class SoakCounter : IAsyncDisposable
{
    private const int BatchSize = 40;

    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _stop = new();
    private readonly Lock _lock = new();
    private readonly int _bound;
    private readonly Queue<long> _pending = new();
    private readonly Dictionary<long, (int Worker, bool Started)> _out = [];
    private readonly Dictionary<int, int> _runningBy = [];
    private readonly HashSet<int> _killed = [];
    private readonly Dictionary<string, long> _failures = [];
    private readonly List<string> _findings = [];
    private readonly List<Task> _connections = [];
    private readonly Dictionary<int, Waiting> _waiting = [];
    private readonly HashSet<int> _retiring = [];
    private readonly HashSet<int> _joined = [];
    private readonly TimeSpan _starveAfter;
    private Task? _accept;
    private long _starts;
    private long _firstStartAt;
    private long _lastStartAt;
    private long _nextId;
    private bool _ending;
    private bool _inFault;
    private int _running;
    private int _disposed;

    /// <param name="bound">The most items that may run at once across the fleet: a start above it is a violation.</param>
    /// <param name="starveAfter">How long a worker may wait for its next start while the others start at least <paramref name="bound"/> items (default 10 s).</param>
    public SoakCounter(int bound, TimeSpan? starveAfter = null)
    {
        _bound = bound;
        _starveAfter = starveAfter ?? TimeSpan.FromSeconds(10);
    }

    /// <summary>The port it listens on (127.0.0.1).</summary>
    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    /// <summary>Items run to their end.</summary>
    public long Done { get; private set; }

    /// <summary>Items a killed worker had started, handed out again.</summary>
    public long Interrupted { get; private set; }

    /// <summary>Items a failed run gave back unstarted, handed out again.</summary>
    public long GivenBack { get; private set; }

    /// <summary>Leases the workers' renewals found gone and could not re-add (<c>fanout.redis.lease.lost</c>): their items ran on without one.</summary>
    public long LeasesLost { get; private set; }

    /// <summary>The most items running at once across the fleet.</summary>
    public int Peak { get; private set; }

    /// <summary>Starts above the bound.</summary>
    public long AboveBound { get; private set; }

    /// <summary>Starts of an item already started or done.</summary>
    public long Twice { get; private set; }

    /// <summary>Items handed to a worker that exited by itself without running them or giving them back.</summary>
    public long Lost { get; private set; }

    /// <summary>From the first start to the last (the referee's clock).</summary>
    public TimeSpan StartSpan
    {
        get
        {
            lock (_lock)
            {
                return TimeSpan.FromMilliseconds(_lastStartAt - _firstStartAt);
            }
        }
    }

    /// <summary>Starts counted (every start of every item, re-runs included).</summary>
    public long Starts
    {
        get
        {
            lock (_lock)
            {
                return _starts;
            }
        }
    }

    /// <summary>Waits of a worker with items to start that went beyond the starvation bound while the others ran (see remarks).</summary>
    public long Starved { get; private set; }

    /// <summary>The longest a worker with items to start waited for its next start while the others started at least a budget of items.</summary>
    public long WorstWaitMs { get; private set; }

    /// <summary>Failed runs by exception type.</summary>
    public IReadOnlyDictionary<string, long> Failures
    {
        get
        {
            lock (_lock)
            {
                return new Dictionary<string, long>(_failures);
            }
        }
    }

    /// <summary>The first violations, described.</summary>
    public IReadOnlyList<string> Findings
    {
        get
        {
            lock (_lock)
            {
                return [.. _findings];
            }
        }
    }

    public void Start()
    {
        _listener.Start();
        _accept = AcceptAsync(_stop.Token);
    }

    /// <summary>Items running now in worker <paramref name="pid"/>.</summary>
    public int RunningIn(int pid)
    {
        lock (_lock)
        {
            return _runningBy.GetValueOrDefault(pid);
        }
    }

    /// <summary>Says <paramref name="pid"/> is about to be killed: its items are handed out again, not lost.</summary>
    public void Killing(int pid)
    {
        lock (_lock)
        {
            _killed.Add(pid);
        }
    }

    /// <summary>True once worker <paramref name="pid"/> has said hello.</summary>
    public bool HasJoined(int pid)
    {
        lock (_lock)
        {
            return _joined.Contains(pid);
        }
    }

    /// <summary>The next time worker <paramref name="pid"/> asks for items it is told to finish (it leaves the fleet; its items must all end).</summary>
    public void Retire(int pid)
    {
        lock (_lock)
        {
            _retiring.Add(pid);
        }
    }

    /// <summary>A fault is being injected: no wait is judged starved until <see cref="FaultEnds"/>.</summary>
    public void FaultBegins()
    {
        lock (_lock)
        {
            _inFault = true;
        }
    }

    /// <summary>The fault is over: every wait under way counts from now, against the starts from now.</summary>
    public void FaultEnds()
    {
        lock (_lock)
        {
            _inFault = false;
            var now = Environment.TickCount64;
            foreach (var (pid, wait) in _waiting.ToList())
            {
                _waiting[pid] = wait with { Since = now, StartsAt = _starts };
            }
        }
    }

    /// <summary>From now on, workers asking for items are told to finish.</summary>
    public void End()
    {
        lock (_lock)
        {
            _ending = true;
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stop.CancelAsync();
        _listener.Stop();
        if (_accept is not null)
        {
            await _accept.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        Task[] connections;
        lock (_lock)
        {
            connections = [.. _connections];
        }

        await Task.WhenAll(connections).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        _stop.Dispose();
    }

    private async Task AcceptAsync(CancellationToken stop)
    {
        while (!stop.IsCancellationRequested)
        {
            TcpClient client;
            try
            {
                client = await _listener.AcceptTcpClientAsync(stop).ConfigureAwait(false);
            }
            catch (Exception) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (SocketException)
            {
                continue;
            }

            lock (_lock)
            {
                _connections.Add(ServeAsync(client, stop));
            }
        }
    }

    private async Task ServeAsync(TcpClient client, CancellationToken stop)
    {
        var pid = 0;
        using (client)
        {
            try
            {
                var stream = client.GetStream();
                using var reader = new StreamReader(stream);
                await using var writer = new StreamWriter(stream) { AutoFlush = true, NewLine = "\n" };
                while (await reader.ReadLineAsync(stop).ConfigureAwait(false) is { } line)
                {
                    var answer = Handle(line, ref pid);
                    await writer.WriteLineAsync(answer).ConfigureAwait(false);
                }
            }
            catch (Exception)
            {
                // The worker died (killed) or the soak ends: its items are settled below.
            }
        }

        Closed(pid);
    }

    private string Handle(string line, ref int pid)
    {
        var argument = line.Length > 2 ? line[2..] : string.Empty;
        lock (_lock)
        {
            switch (line[0])
            {
                case 'h':
                    pid = int.Parse(argument, CultureInfo.InvariantCulture);
                    _joined.Add(pid);
                    return "k";
                case 'n':
                    if (_ending || _retiring.Contains(pid))
                    {
                        _waiting.Remove(pid);
                        return "x";
                    }

                    _waiting[pid] = new Waiting(BatchSize, Environment.TickCount64, _starts, Starved: false);

                    var ids = new long[BatchSize];
                    for (var i = 0; i < ids.Length; i++)
                    {
                        ids[i] = _pending.Count > 0 ? _pending.Dequeue() : ++_nextId;
                        _out[ids[i]] = (pid, false);
                    }

                    return "b " + string.Join(',', ids);
                case 's':
                    Started(long.Parse(argument, CultureInfo.InvariantCulture), pid);
                    return "k";
                case 'e':
                    Ended(long.Parse(argument, CultureInfo.InvariantCulture), pid);
                    return "k";
                case 'u':
                    foreach (var text in argument.Split(',', StringSplitOptions.RemoveEmptyEntries))
                    {
                        var id = long.Parse(text, CultureInfo.InvariantCulture);
                        if (_out.Remove(id, out var state) && !state.Started)
                        {
                            _pending.Enqueue(id);
                            GivenBack++;
                            _waiting.Remove(pid);
                        }
                        else
                        {
                            Finding($"item {id} given back unstarted by worker {pid}, but it had started or was not out");
                        }
                    }

                    return "k";
                case 'l':
                    LeasesLost += long.Parse(argument, CultureInfo.InvariantCulture);
                    return "k";
                case 'f':
                    // A failed run is not a wait: the worker gives its items back and asks again.
                    _waiting.Remove(pid);
                    _failures[argument] = _failures.GetValueOrDefault(argument) + 1;
                    return "k";
                default:
                    return "?";
            }
        }
    }

    private void Started(long id, int pid)
    {
        if (!_out.TryGetValue(id, out var state) || state.Started || state.Worker != pid)
        {
            Twice++;
            Finding($"item {id} started by worker {pid} while {(state.Started ? "already started" : "not handed to it")}");
        }

        _out[id] = (pid, true);
        _running++;
        _runningBy[pid] = _runningBy.GetValueOrDefault(pid) + 1;
        Peak = Math.Max(Peak, _running);
        _starts++;
        var now = Environment.TickCount64;
        _firstStartAt = _starts == 1 ? now : _firstStartAt;
        _lastStartAt = now;
        if (_waiting.TryGetValue(pid, out var waiting))
        {
            if (!_inFault && _starts - 1 - waiting.StartsAt >= _bound)
            {
                WorstWaitMs = Math.Max(WorstWaitMs, now - waiting.Since);
            }

            if (waiting.Unstarted > 1)
            {
                _waiting[pid] = new Waiting(waiting.Unstarted - 1, now, _starts, Starved: false);
            }
            else
            {
                _waiting.Remove(pid);
            }
        }

        // The others waiting: starved once they waited beyond the bound while this fleet kept starting items.
        foreach (var (other, wait) in _waiting.ToList())
        {
            if (!_inFault && other != pid && !wait.Starved && now - wait.Since > _starveAfter.TotalMilliseconds && _starts - wait.StartsAt >= _bound)
            {
                Starved++;
                Finding($"worker {other} started none of its {wait.Unstarted} items for {now - wait.Since} ms while the others started {_starts - wait.StartsAt}");
                _waiting[other] = wait with { Starved = true };
            }
        }

        if (_running > _bound)
        {
            AboveBound++;
            Finding($"{_running} items running at once across the fleet, above {_bound}");
        }
    }

    private void Ended(long id, int pid)
    {
        if (_out.Remove(id, out var state) && state.Started && state.Worker == pid)
        {
            _running--;
            _runningBy[pid]--;
            Done++;
        }
        else
        {
            Finding($"item {id} ended by worker {pid} without a start");
        }
    }

    private void Closed(int pid)
    {
        lock (_lock)
        {
            var killed = _killed.Contains(pid);
            _waiting.Remove(pid);
            foreach (var (id, state) in _out.Where(p => p.Value.Worker == pid).ToList())
            {
                _out.Remove(id);
                if (state.Started)
                {
                    _running--;
                    _runningBy[pid]--;
                }

                if (killed)
                {
                    _pending.Enqueue(id);
                    Interrupted += state.Started ? 1 : 0;
                }
                else
                {
                    Lost++;
                    Finding($"item {id} handed to worker {pid}, which exited without {(state.Started ? "ending" : "running or giving back")} it");
                }
            }
        }
    }

    /// <summary>A worker's items not yet started: since when it has waited for its next start, and the fleet's starts then.</summary>
    private readonly record struct Waiting(int Unstarted, long Since, long StartsAt, bool Starved);

    private void Finding(string text)
    {
        if (_findings.Count < 20)
        {
            _findings.Add(text);
        }
    }
}
