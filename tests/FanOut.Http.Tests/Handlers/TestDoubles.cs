using System.Net;

using Microsoft.Extensions.Time.Testing;

namespace FanOut.Http.Tests.Handlers;

/// <summary>A user's limit that records what it is told, on a fake clock.</summary>
internal sealed class RecordingLimit(int limit, TimeProvider time) : ConcurrencyLimit(LimitTraits.LearnsFromWork)
{
    private readonly Lock _lock = new();
    private readonly List<ItemOutcome> _outcomes = [];

    public override int Current => limit;

    public override string Kind => "recording";

    public override TimeProvider TimeProvider => time;

    public IReadOnlyList<ItemOutcome> Outcomes
    {
        get
        {
            lock (_lock)
            {
                return [.. _outcomes];
            }
        }
    }

    protected override void OnItemCompleted(long startTimestamp, ItemOutcome outcome)
    {
        lock (_lock)
        {
            _outcomes.Add(outcome);
        }
    }
}

/// <summary>The server: answers each request with the next scripted response (the last one repeats), recording what came.</summary>
internal sealed class ScriptedServer(params Func<HttpRequestMessage, CancellationToken, Task<HttpResponseMessage>>[] script) : HttpMessageHandler
{
    private int _calls;

    public int Calls => Volatile.Read(ref _calls);

    public List<string?> Bodies { get; } = [];

    public static Func<HttpRequestMessage, CancellationToken, Task<HttpResponseMessage>> Status(HttpStatusCode status, Action<HttpResponseMessage>? configure = null) =>
        (request, _) =>
        {
            var response = new HttpResponseMessage(status) { RequestMessage = request };
            configure?.Invoke(response);
            return Task.FromResult(response);
        };

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        var call = Interlocked.Increment(ref _calls);
        var body = request.Content is null ? null : await request.Content.ReadAsStringAsync(cancellationToken);
        lock (Bodies)
        {
            Bodies.Add(body);
        }

        return await script[Math.Min(call, script.Length) - 1](request, cancellationToken);
    }
}
