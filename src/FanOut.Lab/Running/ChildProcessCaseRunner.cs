using System.Diagnostics;

using FanOut.Lab.Results;
using FanOut.Lab.Scenarios;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Running;

/// <summary>The default runner: each case in a fresh child process, so no case inherits the thread pool another one grew.</summary>
/// <remarks>A child that crashes, hangs past <paramref name="timeout"/> or writes no result becomes a failed case with
/// the reason; the run goes on with the next case. A hung child is killed with its whole process tree.</remarks>
public sealed class ChildProcessCaseRunner(ChildProcessLauncher launcher, TimeSpan timeout) : ICaseRunner
{
    /// <inheritdoc/>
    public async Task<CaseResult> RunAsync(Scenario scenario, ScenarioSize size, int caseIndex, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(scenario);
        ArgumentNullException.ThrowIfNull(size);
        var labCase = scenario.Cases(size)[caseIndex];
        var resultPath = Path.Combine(Path.GetTempPath(), $"fanout-case-{Guid.NewGuid():N}.json");

        // The child makes its temp files and databases in here; deleting it after the child has gone cleans up even
        // after a kill (Ctrl+C, timeout), when the child's own clean-up never ran.
        var caseTemp = Path.Combine(Path.GetTempPath(), $"fanout-case-{Guid.NewGuid():N}");
        try
        {
            Directory.CreateDirectory(caseTemp);
            var info = launcher.StartInfo(scenario.Id, caseIndex, size.Scale, size.Full, resultPath);
            info.Environment[LabTempFolder.RootVariable] = caseTemp;
            var error = await RunChildAsync(info, cancellationToken).ConfigureAwait(false);
            if (error is null && File.Exists(resultPath))
            {
                return ResultsJson.Deserialize<CaseResult>(await File.ReadAllTextAsync(resultPath, cancellationToken).ConfigureAwait(false));
            }

            var workload = labCase.CreateWorkload();
            return CaseResult.Failed(labCase.Strategy.Name, workload.Name, CaseParameters.Of(labCase, workload), error ?? "the child process wrote no result", labCase.SeedSays);
        }
        finally
        {
            File.Delete(resultPath);
            LabTempFolder.Delete(caseTemp);
        }
    }

    /// <summary>Runs the child to its end; returns why it failed, or null.</summary>
    private async Task<string?> RunChildAsync(ProcessStartInfo info, CancellationToken cancellationToken)
    {
        using var process = new Process { StartInfo = info };
        var lastError = string.Empty;
        process.ErrorDataReceived += (_, e) =>
        {
            if (!string.IsNullOrWhiteSpace(e.Data))
            {
                lastError = e.Data.Trim();
            }
        };

        // Drained but ignored: a child that fills an unread stdout pipe would block forever.
        process.OutputDataReceived += (_, _) => { };
        try
        {
            process.Start();
        }
        catch (Exception ex) when (ex is System.ComponentModel.Win32Exception or InvalidOperationException)
        {
            return $"could not start the child process {info.FileName}: {ex.Message}";
        }

        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            cancellationToken.ThrowIfCancellationRequested();
            return $"timed out after {timeout.TotalSeconds:0.#} s; the child process was killed";
        }

        // WaitForExitAsync returns once the process exits, but the redirected streams may still hold the last lines.
        process.WaitForExit();

        // Ctrl+C reaches the child too (same process group): a child that died of it is an interruption, not a failed case.
        if (process.ExitCode != 0)
        {
            cancellationToken.ThrowIfCancellationRequested();
        }

        return process.ExitCode == 0
            ? null
            : $"the child process exited with code {process.ExitCode}" + (lastError.Length > 0 ? $": {lastError}" : string.Empty);
    }
}
