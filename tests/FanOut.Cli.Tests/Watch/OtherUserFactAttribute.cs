using System.Diagnostics;

namespace FanOut.Cli.Tests.Watch;

/// <summary>
/// A fact that runs <c>fanout watch</c> as the user <c>nobody</c> against a process of this user: it needs root (to
/// switch user with runuser) and a build folder <c>nobody</c> can read; skipped, saying which is missing, elsewhere.
/// </summary>
public sealed class OtherUserFactAttribute : FactAttribute
{
    public const string RunUser = "/usr/sbin/runuser";

    public OtherUserFactAttribute()
    {
        if (Environment.UserName != "root" || !File.Exists(RunUser))
        {
            Skip = "runs only as root with runuser (to start the watch as another user)";
            return;
        }

        using var probe = Process.Start(RunUser, ["-u", "nobody", "--", "test", "-r", Path.Combine(AppContext.BaseDirectory, "FanOut.Cli.dll")]);
        probe.WaitForExit();
        if (probe.ExitCode != 0)
        {
            Skip = "the user nobody cannot read this build folder (a parent folder is private)";
        }
    }
}
