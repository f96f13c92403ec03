namespace FanOut.Cli.Tests.Watch;

/// <summary>A fact that needs tmux (a headless terminal): skipped, saying how to get it, only where tmux is not installed (.ci/run installs Debian's package).</summary>
public sealed class TmuxFactAttribute : FactAttribute
{
    public TmuxFactAttribute()
    {
        if (!File.Exists("/usr/bin/tmux") && !File.Exists("/usr/local/bin/tmux"))
        {
            Skip = "tmux is not installed: .ci/run installs it (apt-get install -y tmux)";
        }
    }
}
