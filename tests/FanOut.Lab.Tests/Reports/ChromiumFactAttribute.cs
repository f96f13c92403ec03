namespace FanOut.Lab.Tests.Reports;

/// <summary>A fact that needs Chromium: skipped, saying how to get it, only where no chromium is on the PATH (.ci/run installs Debian's package).</summary>
public sealed class ChromiumFactAttribute : FactAttribute
{
    public ChromiumFactAttribute()
    {
        if (HeadlessChromium.Find() is null)
        {
            Skip = "chromium is not installed: .ci/run installs it (apt-get install -y chromium); on another OS put chromium on the PATH";
        }
    }
}
