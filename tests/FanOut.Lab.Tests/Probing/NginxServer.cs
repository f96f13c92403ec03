using System.Diagnostics;
using System.Globalization;
using System.Net.Sockets;

namespace FanOut.Lab.Tests.Probing;

/// <summary>Debian's nginx, started by the test on a free loopback port in its own temp folder with its own config,
/// proxying to a slow upstream with <c>limit_conn</c> on the location; stopped and cleaned up on dispose.</summary>
internal sealed class NginxServer : IDisposable
{
    private readonly Process _process;
    private readonly string _folder;

    private NginxServer(Process process, string folder, int port)
    {
        _process = process;
        _folder = folder;
        BaseAddress = new Uri($"http://127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}/");
    }

    public Uri BaseAddress { get; }

    /// <summary>The nginx binary, or null when it is not installed.</summary>
    public static string? FindBinary() =>
        new[] { "/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx" }
            .Concat((Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(':', StringSplitOptions.RemoveEmptyEntries).Select(d => Path.Combine(d, "nginx")))
            .FirstOrDefault(File.Exists);

    /// <summary>Starts nginx with at most <paramref name="connectionLimit"/> requests at once (503 beyond), in front of <paramref name="upstream"/>.</summary>
    public static async Task<NginxServer> StartAsync(string binary, Uri upstream, int connectionLimit)
    {
        var folder = Directory.CreateTempSubdirectory("fanout-nginx-").FullName;
        var port = FreePort();
        var user = Environment.UserName == "root" ? "user root;" : string.Empty;
        var config = $$"""
            {{user}}
            worker_processes 1;
            daemon off;
            pid {{folder}}/nginx.pid;
            error_log {{folder}}/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path {{folder}}/body;
                proxy_temp_path {{folder}}/proxy;
                fastcgi_temp_path {{folder}}/fastcgi;
                uwsgi_temp_path {{folder}}/uwsgi;
                scgi_temp_path {{folder}}/scgi;
                limit_conn_zone $server_name zone=perserver:1m;
                upstream slow {
                    server {{upstream.Host}}:{{upstream.Port}};
                    keepalive 64;
                }
                server {
                    listen 127.0.0.1:{{port}};
                    server_name probe;
                    location / {
                        limit_conn perserver {{connectionLimit}};
                        limit_conn_status 503;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_pass http://slow;
                    }
                }
            }
            """;
        var configPath = Path.Combine(folder, "nginx.conf");
        await File.WriteAllTextAsync(configPath, config);
        var info = new ProcessStartInfo(binary) { UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true };
        foreach (var arg in new[] { "-p", folder, "-c", configPath, "-e", Path.Combine(folder, "error.log") })
        {
            info.ArgumentList.Add(arg);
        }

        var process = Process.Start(info)!;
        var server = new NginxServer(process, folder, port);
        var started = Stopwatch.GetTimestamp();
        while (!await AcceptsAsync(port))
        {
            if (process.HasExited || Stopwatch.GetElapsedTime(started) > TimeSpan.FromSeconds(10))
            {
                var log = File.Exists(Path.Combine(folder, "error.log")) ? await File.ReadAllTextAsync(Path.Combine(folder, "error.log")) : string.Empty;
                server.Dispose();
                throw new InvalidOperationException($"nginx did not start on port {port}: {log}");
            }

            await Task.Delay(20);
        }

        return server;
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            // SIGQUIT: the master stops its worker and reaps it (a plain kill would leave the worker a zombie).
            using (var quit = Process.Start("kill", ["-QUIT", _process.Id.ToString(CultureInfo.InvariantCulture)]))
            {
                quit.WaitForExit();
            }

            if (!_process.WaitForExit(TimeSpan.FromSeconds(5)))
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit();
            }
        }

        _process.Dispose();
        Directory.Delete(_folder, recursive: true);
    }

    private static async Task<bool> AcceptsAsync(int port)
    {
        try
        {
            using var client = new TcpClient();
            await client.ConnectAsync(System.Net.IPAddress.Loopback, port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(System.Net.IPAddress.Loopback, 0);
        listener.Start();
        return ((System.Net.IPEndPoint)listener.LocalEndpoint).Port;
    }
}
