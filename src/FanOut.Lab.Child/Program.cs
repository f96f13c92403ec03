using System.Globalization;
using System.Text.Json;

using FanOut.Lab.Child;
using FanOut.Lab.Running;
using FanOut.Lab.Scenarios;

// The published child: the same arguments as `fanout child` (ChildProcessLauncher builds them), for the scenarios that
// can run published. No command-line library, no catalog: only the code of the scenario it runs is compiled in.
const int Usage = 2;
const int Canceled = 130;
var options = new Dictionary<string, string>(StringComparer.Ordinal);
var full = false;
for (var i = 0; i < args.Length; i++)
{
    switch (args[i])
    {
        case ChildProcessLauncher.ChildCommand:
            break;
        case "--full":
            full = true;
            break;
        case var name when name.StartsWith("--", StringComparison.Ordinal) && i + 1 < args.Length:
            options[name] = args[++i];
            break;
        default:
            Console.Error.WriteLine($"fanout published child: unexpected argument '{args[i]}'; expected --scenario ID --case N --scale F [--full] --result PATH.");
            return Usage;
    }
}

var scenario = PublishedScenarios.Find(options.GetValueOrDefault("--scenario") ?? string.Empty);
if (scenario is null
    || !int.TryParse(options.GetValueOrDefault("--case"), NumberStyles.Integer, CultureInfo.InvariantCulture, out var index)
    || !double.TryParse(options.GetValueOrDefault("--scale") ?? "1", NumberStyles.Float, CultureInfo.InvariantCulture, out var scale)
    || options.GetValueOrDefault("--result") is not { } resultPath)
{
    Console.Error.WriteLine($"fanout published child: need --scenario ({string.Join(", ", PublishedScenarios.Ids)}) --case N --scale F --result PATH.");
    return Usage;
}

var cases = scenario.Cases(new ScenarioSize(scale, full));
if (index < 0 || index >= cases.Count)
{
    Console.Error.WriteLine($"fanout published child: --case {index} is outside 0..{cases.Count - 1}.");
    return Usage;
}

using var interrupt = new CancellationTokenSource();
Console.CancelKeyPress += (_, e) =>
{
    e.Cancel = true;
    interrupt.Cancel();
};
try
{
    var result = new InProcessCaseRunner(RunPolicy.Default).Run(cases[index], interrupt.Token);
    File.WriteAllText(resultPath, JsonSerializer.Serialize(result, ChildJsonContext.Default.CaseResult));
    return 0;
}
catch (OperationCanceledException) when (interrupt.IsCancellationRequested)
{
    return Canceled;
}
