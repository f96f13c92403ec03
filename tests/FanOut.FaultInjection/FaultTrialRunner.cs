namespace FanOut.FaultInjection;

/// <summary>Runs a trial's calls together on one shared limit and checks every invariant; returns the violations (none when sound).</summary>
public static class FaultTrialRunner
{
    private static long s_unobserved;

    static FaultTrialRunner()
    {
        TaskScheduler.UnobservedTaskException += (_, e) =>
        {
            if (e.Exception.InnerExceptions.Any(static x => x is InjectedException or OperationCanceledException))
            {
                Interlocked.Increment(ref s_unobserved);
            }
        };
    }

    /// <summary>Unobserved task exceptions that carried an injected fault, since the process started (force collections before reading).</summary>
    public static long UnobservedExceptions => Interlocked.Read(ref s_unobserved);

    public static async Task<IReadOnlyList<string>> RunAsync(FaultTrial trial)
    {
        var limit = trial.CreateLimit();
        var limitProbe = new LimitProbe();
        var probes = trial.Cases.Select(c => new CaseProbe(c, limitProbe)).ToArray();
        var violations = new List<string>();

        await Task.WhenAll(probes.Select(p => RunCaseAsync(p, limit))).ConfigureAwait(false);

        foreach (var probe in probes)
        {
            violations.AddRange(probe.Violations);
            probe.Caller.Dispose();
        }

        if (limit.InFlight != 0)
        {
            violations.Add($"limit InFlight is {limit.InFlight} after every call returned");
        }

        var bound = trial.LimitKind switch
        {
            LimitKind.Fixed => trial.FixedLimit,
            LimitKind.Adaptive => limit.Peak,
            _ => int.MaxValue,
        };
        if (limitProbe.Peak > bound)
        {
            violations.Add($"{limitProbe.Peak} bodies in flight on a limit of {bound}");
        }

        return violations;
    }

    private static async Task RunCaseAsync(CaseProbe probe, ConcurrencyLimit limit)
    {
        var c = probe.Case;
        probe.Limit = limit;
        var options = new FanOutOptions { Limit = limit, Errors = c.Errors, Ordered = c.Overload == Overload.OrderedStream };
        var token = probe.Caller.Token;
        var instrumented = new InstrumentedSource(probe);
        IAsyncEnumerable<int> source = instrumented;
        IEnumerable<int> items = c.Shape switch
        {
            SourceShape.Array => Enumerable.Range(0, c.ItemCount).ToArray(),
            SourceShape.List => Enumerable.Range(0, c.ItemCount).ToList(),
            _ => instrumented,
        };

        Func<int, CancellationToken, ValueTask<int>> body = (i, ct) => Body(probe, i, ct);
        var observed = new Observed();
        try
        {
            switch (c.Overload)
            {
                case Overload.ResultsAsync:
                    var results = c.Shape == SourceShape.AsyncEnumerable ? source.FanOutAsync(body, options, token) : items.FanOutAsync(body, options, token);
                    observed.Task = results;
                    observed.Results = await results.ConfigureAwait(false);
                    break;
                case Overload.ActionsAsync:
                    Func<int, CancellationToken, ValueTask> action = async (i, ct) => await Body(probe, i, ct).ConfigureAwait(false);
                    var actions = c.Shape == SourceShape.AsyncEnumerable ? source.FanOutAsync(action, options, token) : items.FanOutAsync(action, options, token);
                    observed.Task = actions;
                    await actions.ConfigureAwait(false);
                    break;
                case Overload.Outcomes:
                    var outcomes = c.Shape == SourceShape.AsyncEnumerable
                        ? source.FanOutOutcomes(body, options, token)
                        : items.FanOutOutcomes(body, options, token);
                    await foreach (var outcome in outcomes.ConfigureAwait(false))
                    {
                        observed.Outcomes.Add(outcome);
                        if (observed.Outcomes.Count == c.BreakAfter)
                        {
                            observed.Broke = true;
                            break;
                        }
                    }

                    break;
                default:
                    var stream = c.Shape == SourceShape.AsyncEnumerable
                        ? source.FanOutStream(body, options, token)
                        : items.FanOutStream(body, options, token);
                    await foreach (var value in stream.ConfigureAwait(false))
                    {
                        observed.Yielded.Add(value);
                        if (observed.Yielded.Count == c.BreakAfter)
                        {
                            observed.Broke = true;
                            break;
                        }
                    }

                    break;
            }
        }
        catch (Exception e)
        {
            observed.Error = e;
        }

        probe.Returned();
        Check(probe, observed);
    }

    private static ValueTask<int> Body(CaseProbe probe, int item, CancellationToken ct)
    {
        var behavior = probe.Case.Bodies[item];
        probe.EnterBody(item);
        switch (behavior)
        {
            case BodyBehavior.CompleteSynchronously:
                probe.ExitBody();
                return new ValueTask<int>(Expected(item));
            case BodyBehavior.ThrowBeforeAwait:
                probe.ExitBody();
                throw new InjectedException($"item {item}");
            case BodyBehavior.ThrowCanceledWithoutCancellation:
                probe.ExitBody();
                throw new OperationCanceledException($"item {item}");
            case BodyBehavior.ThrowCanceledIfCanceled:
                probe.ExitBody();
                ct.ThrowIfCancellationRequested();
                return new ValueTask<int>(Expected(item));
            case BodyBehavior.BlockBriefly:
                Thread.Sleep(1);
                probe.ExitBody();
                return new ValueTask<int>(Expected(item));
            default:
                return AsyncBody(probe, item, behavior, ct);
        }
    }

    private static async ValueTask<int> AsyncBody(CaseProbe probe, int item, BodyBehavior behavior, CancellationToken ct)
    {
        try
        {
            if (behavior == BodyBehavior.DelayThenComplete)
            {
                await Task.Delay(1).ConfigureAwait(false);
            }
            else if (behavior == BodyBehavior.NestedLease)
            {
                // Nested use of the item's own limit: the lease reuses the item's permit (never waits for a second one).
                using var lease = await probe.Limit!.AsRateLimiter().AcquireAsync(1, ct).ConfigureAwait(false);
                if (!lease.IsAcquired)
                {
                    probe.Violations.Enqueue($"item {item}: a nested lease of the item's limit was not acquired");
                }

                await Task.Yield();
            }
            else if (behavior == BodyBehavior.NestedFanOut)
            {
                var inner = await new[] { 1, 2, 3 }.FanOutAsync(async (x, _) => { await Task.Yield(); return x; }, new FanOutOptions { Limit = probe.Limit }, ct).ConfigureAwait(false);
                if (inner.Sum() != 6)
                {
                    probe.Violations.Enqueue($"item {item}: a nested call returned {string.Join(",", inner)}");
                }
            }
            else
            {
                await Task.Yield();
            }

            return behavior == BodyBehavior.ThrowAfterAwait ? throw new InjectedException($"item {item}") : Expected(item);
        }
        finally
        {
            probe.ExitBody();
        }
    }

    private static int Expected(int item) => (item * 2) + 1;

    private static void Check(CaseProbe probe, Observed observed)
    {
        var c = probe.Case;
        void Violation(string what) => probe.Violations.Enqueue(what);

        // The source: disposed exactly once if an enumerator was made, never used after.
        if (probe.DisposedBeforeLastMoveNext)
        {
            Violation("MoveNext after Dispose");
        }

        var madeEnumerator = probe.GetEnumeratorCalls > 0 && !(c.SourceFault == SourceFault.GetEnumerator);
        if (c.Shape is SourceShape.LazyEnumerable or SourceShape.AsyncEnumerable && probe.Disposals != (madeEnumerator ? 1 : 0))
        {
            Violation($"enumerator disposed {probe.Disposals} times (made: {madeEnumerator})");
        }

        if (probe.GetEnumeratorCalls > 1)
        {
            Violation($"GetEnumerator called {probe.GetEnumeratorCalls} times");
        }

        var ran = Enumerable.Range(0, c.ItemCount).Where(i => probe.Runs(i) > 0).ToArray();
        var failed = ran.Where(i => FaultCase.Fails(c.Bodies[i])).ToHashSet();
        var outcomes = c.Overload == Overload.Outcomes;
        var error = observed.Error;

        if (observed.Broke)
        {
            if (error is not null && !(probe.CancelRequested && error is OperationCanceledException))
            {
                Violation($"a consumer that broke out got {error.GetType().Name}: {error.Message}");
            }

            return; // the rest of the outcome is the consumer's choice
        }

        if (probe.CancelRequested)
        {
            if (error is not OperationCanceledException || observed.Task is { IsCanceled: false })
            {
                Violation($"caller canceled, but the call ended with {Describe(error)} ({observed.Task?.Status})");
            }

            return;
        }

        var bodyFailures = !outcomes && failed.Count > 0;
        if (c.Errors == ErrorMode.FailFast && (bodyFailures || probe.SourceThrew))
        {
            // The first exception: an injected one, or a body's OperationCanceledException; the task itself faulted, not canceled.
            if (error is not (InjectedException or OperationCanceledException) || observed.Task is { IsFaulted: false })
            {
                Violation($"FailFast with failures ended with {Describe(error)} ({observed.Task?.Status})");
            }

            return;
        }

        // From here every item that could be claimed must have run exactly once.
        var reachable = c.SourceFault is SourceFault.MoveNext or SourceFault.Current ? c.SourceFaultAt : c.SourceFault == SourceFault.GetEnumerator ? 0 : c.ItemCount;
        for (var i = 0; i < Math.Min(reachable, c.ItemCount); i++)
        {
            if (probe.Runs(i) != 1)
            {
                Violation($"item {i} ran {probe.Runs(i)} times in a run that must run every item once");
            }
        }

        if (bodyFailures)
        {
            if (error is not FanOutException fanOut)
            {
                Violation($"RunAll with body failures ended with {Describe(error)}");
                return;
            }

            if (fanOut.FailureCount != failed.Count)
            {
                Violation($"FanOutException counts {fanOut.FailureCount} failures, {failed.Count} items failed");
            }

            if (!fanOut.Failures.All(f => failed.Contains((int)f.Index) && f.Exception.Message == $"item {f.Index}"))
            {
                Violation("a FanOutFailure is not tied to its item");
            }

            if (fanOut.SourceExceptions.Count != (probe.SourceThrew ? 1 : 0))
            {
                Violation($"FanOutException carries {fanOut.SourceExceptions.Count} source exceptions (source threw: {probe.SourceThrew})");
            }

            if (fanOut is FanOutException<int> withResults)
            {
                for (var i = 0; i < withResults.Results.Count; i++)
                {
                    if (withResults.Succeeded(i) != !failed.Contains(i) || (withResults.Succeeded(i) && withResults.Results[i] != Expected(i)))
                    {
                        Violation($"partial result {i} is wrong");
                    }
                }
            }

            return;
        }

        if (probe.SourceThrew)
        {
            if (error is not InjectedException)
            {
                Violation($"a source failure ended the call with {Describe(error)}");
            }

            return;
        }

        if (error is not null)
        {
            Violation($"a clean run ended with {Describe(error)}");
            return;
        }

        var all = Enumerable.Range(0, c.ItemCount).Select(Expected).ToArray();
        switch (c.Overload)
        {
            case Overload.ResultsAsync when !all.SequenceEqual(observed.Results ?? []):
                Violation("results are not the items' results in source order");
                break;
            case Overload.OrderedStream when !all.SequenceEqual(observed.Yielded):
                Violation("the ordered stream did not yield every result in source order");
                break;
            case Overload.UnorderedStream when !all.Order().SequenceEqual(observed.Yielded.Order()):
                Violation("the stream did not yield every result once");
                break;
            case Overload.Outcomes:
                if (observed.Outcomes.Count != c.ItemCount
                    || observed.Outcomes.Any(o => o.Succeeded == FaultCase.Fails(c.Bodies[o.Index]) || (o.Succeeded && o.Result != Expected((int)o.Index))))
                {
                    Violation("the outcomes are not one per item with its result or failure");
                }

                break;
        }
    }

    private static string Describe(Exception? error) => error is null ? "success" : $"{error.GetType().Name}: {error.Message}";

    private sealed class Observed
    {
        public int[]? Results { get; set; }

        public List<int> Yielded { get; } = [];

        public List<FanOutOutcome<int>> Outcomes { get; } = [];

        public bool Broke { get; set; }

        public Exception? Error { get; set; }

        /// <summary>The call's task (not for streams), to tell a faulted task from a canceled one.</summary>
        public Task? Task { get; set; }
    }
}
