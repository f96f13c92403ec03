using System.Diagnostics;
using System.Security.Cryptography;

using FanOut.Lab.Measurement;

namespace FanOut.Lab.Workloads.RealIo;

/// <summary><c>hash-files</c>, seed 000's Parallel.ForEach example: SHA-256 of one real file per item.</summary>
/// <remarks>
/// <see cref="SetUpAsync"/> writes N files of a given size (seeded random bytes) into a <see cref="LabTempFolder"/>
/// once per case; <see cref="DisposeAsync"/> deletes them. The synchronous form reads and hashes on the calling thread,
/// as the seed's <c>SHA256.HashData(stream)</c> does; the asynchronous form uses an async file stream and
/// <see cref="SHA256.HashDataAsync(Stream, CancellationToken)"/>. After the first run the files are in the page
/// cache, so this is mostly CPU: the seed's case for Parallel.ForEach.
/// </remarks>
public sealed class HashFilesWorkload : Workload, ICaseLifecycle, ILiveCounters
{
    private const int RandomSeed = 7;
    private readonly int _itemCount;
    private readonly int _fileBytes;
    private readonly byte[][] _hashes;
    private ItemOutcomes? _outcomes;
    private LabTempFolder? _folder;
    private string[] _files = [];

    /// <summary>Creates the workload for <paramref name="itemCount"/> files of <paramref name="fileBytes"/> bytes; no file exists until <see cref="SetUpAsync"/>.</summary>
    public HashFilesWorkload(int itemCount, int fileBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(itemCount);
        ArgumentOutOfRangeException.ThrowIfNegative(fileBytes);
        _itemCount = itemCount;
        _fileBytes = fileBytes;
        _hashes = new byte[itemCount][];
    }

    /// <inheritdoc/>
    public override string Name => $"SHA-256 of a {ResultsSize(_fileBytes)} file";

    /// <inheritdoc/>
    public override IReadOnlyDictionary<string, object> Parameters => new Dictionary<string, object> { ["fileBytes"] = _fileBytes };

    /// <inheritdoc/>
    public override WorkloadForms Forms => WorkloadForms.Both;

    /// <inheritdoc/>
    public override WorkProfile Profile => WorkProfile.Cpu;

    /// <inheritdoc/>
    /// <remarks>Reading and hashing at about 1 GB/s per core (SHA-256 with the CPU's instructions, files in the page cache).</remarks>
    public override double EstimateRunMs(double idealMs, int concurrency) =>
        Math.Max(idealMs, (double)_itemCount * _fileBytes / 1e6 / Math.Max(1, Math.Min(concurrency, Environment.ProcessorCount)));

    /// <inheritdoc/>
    /// <remarks>The files are written at set-up, at about 220 MB/s (into the page cache: a hash-files case of 200 MB took
    /// 2.2-3.9 s in all on the Intel Xeon 2-core VM, its runs included, and 1.5-2.2 s on an AMD EPYC one).</remarks>
    public override double EstimateSetupMs => base.EstimateSetupMs + ((double)_itemCount * _fileBytes / 220e3);

    /// <summary>The folder holding the files (after set-up), for tests.</summary>
    internal string FolderPath => _folder?.Path ?? string.Empty;

    /// <summary>The file of item <paramref name="index"/>, for tests.</summary>
    internal string FileOf(int index) => _files[index];

    /// <summary>The hash the last run computed for item <paramref name="index"/>, or null.</summary>
    internal byte[]? HashOf(int index) => Volatile.Read(ref _hashes[index]);

    /// <inheritdoc/>
    public long CompletedNow => _outcomes?.SuccessesNow ?? 0;

    /// <inheritdoc/>
    public long? RejectedNow => null;

    /// <inheritdoc/>
    public int? ServerInFlightNow => null;

    /// <inheritdoc/>
    public async Task SetUpAsync(CancellationToken cancellationToken)
    {
        _folder = LabTempFolder.Create("hash-files");
        _outcomes = new ItemOutcomes(_itemCount);
        _files = new string[_itemCount];
        var random = new Random(RandomSeed);
        var content = new byte[_fileBytes];
        for (var i = 0; i < _itemCount; i++)
        {
            random.NextBytes(content);
            _files[i] = Path.Combine(_folder.Path, $"{i:D5}.bin");
            await File.WriteAllBytesAsync(_files[i], content, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <inheritdoc/>
    public void RunStarting()
    {
        Outcomes.Reset();
        Array.Clear(_hashes);
    }

    /// <inheritdoc/>
    public IoRunMetrics RunFinished(double elapsedMs) => Outcomes.Collect(elapsedMs);

    /// <inheritdoc/>
    public ValueTask DisposeAsync()
    {
        _folder?.Dispose();
        _folder = null;
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc/>
    public override void Run(int index)
    {
        using var scope = Probe.Enter();
        var started = Stopwatch.GetTimestamp();
        try
        {
            using var stream = File.OpenRead(_files[index]);
            _hashes[index] = SHA256.HashData(stream);
            Outcomes.Succeeded(index, started);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            Outcomes.Failed(ex);
        }
    }

    /// <inheritdoc/>
    public override async ValueTask RunAsync(int index, CancellationToken cancellationToken)
    {
        using var scope = Probe.Enter();
        var started = Stopwatch.GetTimestamp();
        try
        {
            var stream = new FileStream(_files[index], FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 4096, useAsync: true);
            await using (stream.ConfigureAwait(false))
            {
                _hashes[index] = await SHA256.HashDataAsync(stream, cancellationToken).ConfigureAwait(false);
            }

            Outcomes.Succeeded(index, started);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            Outcomes.Failed(ex);
        }
    }

    /// <inheritdoc/>
    /// <remarks>Calibration hashes files outside any run, so it must not touch the run's outcome counters.</remarks>
    public override void RunCpuPart(int index)
    {
        using var stream = File.OpenRead(_files[index]);
        CpuSink.Keep(SHA256.HashData(stream)[0]);
    }

    private static string ResultsSize(int bytes) => bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0
        ? $"{bytes / 1024 / 1024} MB"
        : bytes >= 1024 ? $"{bytes / 1024.0:0.#} KB" : $"{bytes} B";

    private ItemOutcomes Outcomes => _outcomes ?? throw new InvalidOperationException($"{Name} runs only between SetUpAsync and DisposeAsync.");
}
