using System.Security.Cryptography;

using FanOut.Lab.Strategies;
using FanOut.Lab.Workloads.RealIo;

namespace FanOut.Lab.Tests.Workloads.RealIo;

public sealed class HashFilesWorkloadTests
{
    public static TheoryData<string> Strategies => new() { "Parallel.ForEach", "Parallel.ForEachAsync" };

    [Theory]
    [MemberData(nameof(Strategies))]
    public async Task Run_EveryFile_HashesLikeSha256HashDataAndDisposeDeletesTheFolder(string strategyName)
    {
        Strategy strategy = strategyName == "Parallel.ForEach" ? new ParallelForEachStrategy() : new ParallelForEachAsyncStrategy();
        const int files = 12;
        var workload = new HashFilesWorkload(files, 10_000);
        string folder;
        try
        {
            await workload.SetUpAsync(CancellationToken.None);
            folder = workload.FolderPath;
            Assert.Equal(files, Directory.GetFiles(folder).Length);
            workload.RunStarting();
            await strategy.RunAsync(workload, Enumerable.Range(0, files).ToArray(), CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(20));
            var io = workload.RunFinished(10);

            Assert.Equal(files, io.Successes);
            Assert.Equal(0, io.Failures);
            for (var i = 0; i < files; i++)
            {
                var bytes = await File.ReadAllBytesAsync(workload.FileOf(i));
                Assert.Equal(10_000, bytes.Length);
                Assert.Equal(SHA256.HashData(bytes), workload.HashOf(i));
            }

            // Seeded content differs per file, so a hash written to the wrong index would show.
            Assert.NotEqual(workload.HashOf(0), workload.HashOf(1));
        }
        finally
        {
            await workload.DisposeAsync();
        }

        Assert.False(Directory.Exists(folder));
    }

    [Fact]
    public async Task SetUpAsync_UnderTheCaseRootVariable_CreatesItsFolderThere()
    {
        var root = Path.Combine(Path.GetTempPath(), $"fanout-root-{Guid.NewGuid():N}");
        Directory.CreateDirectory(root);
        var workload = new HashFilesWorkload(1, 10);
        try
        {
            Environment.SetEnvironmentVariable(LabTempFolder.RootVariable, root);
            await workload.SetUpAsync(CancellationToken.None);
            Assert.StartsWith(root, workload.FolderPath, StringComparison.Ordinal);
        }
        finally
        {
            Environment.SetEnvironmentVariable(LabTempFolder.RootVariable, null);
            await workload.DisposeAsync();
            Directory.Delete(root, recursive: true);
        }
    }
}
