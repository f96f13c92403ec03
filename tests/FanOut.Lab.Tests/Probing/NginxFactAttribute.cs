namespace FanOut.Lab.Tests.Probing;

/// <summary>A fact that needs Debian's nginx: skipped, with the reason, where it is not installed (.ci/run installs it).</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class NginxFactAttribute : FactAttribute
{
    public NginxFactAttribute()
    {
        if (NginxServer.FindBinary() is null)
        {
            Skip = "nginx is not installed and could not be: .ci/run installs it with 'apt-get install -y nginx-light'.";
        }
    }
}
