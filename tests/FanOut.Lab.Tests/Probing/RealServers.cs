using System.Globalization;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace FanOut.Lab.Tests.Probing;

/// <summary>The real servers the probe's tests start: Debian's Apache httpd and nginx, and python's http.server, each
/// with its own config in a temp folder on a free loopback port.</summary>
internal static class RealServers
{
    public static string? Apache => LoopbackProcess.Find("/usr/sbin/apache2", "/usr/sbin/httpd", "apache2", "httpd");

    public static string? Nginx => LoopbackProcess.Find("/usr/sbin/nginx", "/usr/local/sbin/nginx", "nginx");

    public static string? Python => LoopbackProcess.Find("python3");

    /// <summary>Apache httpd, event MPM, one process of exactly <paramref name="threads"/> worker threads proxying to
    /// <paramref name="upstream"/>: <paramref name="threads"/> requests at once, the rest wait for a thread (a queue).
    /// Stopped with SIGTERM, on which the parent stops its child and removes what it made.</summary>
    public static Task<LoopbackProcess> StartApacheAsync(Uri upstream, int threads) =>
        LoopbackProcess.StartAsync("fanout-apache-", Apache!, async (folder, port) =>
        {
            const string Modules = "/usr/lib/apache2/modules";
            // One line per answer as nginx's (ServerAccessLog): seconds.milliseconds, status, and the microseconds apache spent on it.
            const string AccessLogFormat = "%{sec}t.%{msec_frac}t %>s %D";
            var user = Environment.UserName == "root" ? "User www-data\nGroup www-data" : string.Empty;
            var config = $"""
                ServerRoot "{folder}"
                ServerName probe
                Listen 127.0.0.1:{port}
                PidFile {folder}/httpd.pid
                ErrorLog {folder}/error.log
                LogLevel warn
                LogFormat "{AccessLogFormat}" probe
                CustomLog {folder}/access.log probe
                Mutex file:{folder} default
                LoadModule mpm_event_module {Modules}/mod_mpm_event.so
                LoadModule authz_core_module {Modules}/mod_authz_core.so
                LoadModule proxy_module {Modules}/mod_proxy.so
                LoadModule proxy_http_module {Modules}/mod_proxy_http.so
                {user}
                StartServers 1
                ServerLimit 1
                ThreadLimit {threads}
                ThreadsPerChild {threads}
                MinSpareThreads 1
                MaxSpareThreads {threads}
                MaxRequestWorkers {threads}
                ListenBacklog 511
                KeepAlive On
                MaxKeepAliveRequests 0
                ProxyPass "/" "http://{upstream.Host}:{upstream.Port}/"
                """;
            var path = Path.Combine(folder, "httpd.conf");
            await File.WriteAllTextAsync(path, config);
            if (Environment.UserName == "root" && !OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(folder, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.GroupRead | UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherExecute);
            }

            return ["-f", path, "-DFOREGROUND"];
        }, quitSignal: "TERM");

    /// <summary>nginx proxying to <paramref name="upstream"/>, <paramref name="httpDirectives"/> in its http block and
    /// <paramref name="locationDirectives"/> on its one location.</summary>
    public static Task<LoopbackProcess> StartNginxAsync(Uri upstream, string httpDirectives, string locationDirectives) =>
        LoopbackProcess.StartAsync("fanout-nginx-", Nginx!, async (folder, port) =>
        {
            var user = Environment.UserName == "root" ? "user root;" : string.Empty;
            var config = $$"""
                {{user}}
                worker_processes 1;
                daemon off;
                pid {{folder}}/nginx.pid;
                error_log {{folder}}/error.log warn;
                events { worker_connections 1024; }
                http {
                    # One line per answer, time (s.ms) and status, written as it is answered: the server's own count of
                    # what it was offered, which a client starved of CPU cannot skew (ServerAccessLog).
                    log_format probe '$msec $status';
                    access_log {{folder}}/access.log probe;
                    client_body_temp_path {{folder}}/body;
                    proxy_temp_path {{folder}}/proxy;
                    fastcgi_temp_path {{folder}}/fastcgi;
                    uwsgi_temp_path {{folder}}/uwsgi;
                    scgi_temp_path {{folder}}/scgi;
                    {{httpDirectives}}
                    upstream slow {
                        server {{upstream.Host}}:{{upstream.Port}};
                        keepalive 64;
                    }
                    server {
                        listen 127.0.0.1:{{port}};
                        server_name probe;
                        location / {
                            {{locationDirectives}}
                            proxy_http_version 1.1;
                            proxy_set_header Connection "";
                            proxy_pass http://slow;
                        }
                    }
                }
                """;
            var path = Path.Combine(folder, "nginx.conf");
            await File.WriteAllTextAsync(path, config);
            return ["-p", folder, "-c", path, "-e", Path.Combine(folder, "error.log")];
        }, quitSignal: "QUIT");

    /// <summary>python's ThreadingHTTPServer: each request takes a semaphore of <paramref name="capacity"/> (the rest wait
    /// for it: a queue) and sleeps <paramref name="delayMs"/>; or answers <paramref name="status"/> to everything when it
    /// is not 200. With <paramref name="tls"/>, https with that certificate.</summary>
    public static Task<LoopbackProcess> StartPythonAsync(int capacity, int delayMs, int status = 200, SelfSignedCertificate? tls = null) =>
        LoopbackProcess.StartAsync("fanout-python-", Python!, async (folder, port) =>
        {
            var script = Path.Combine(folder, "server.py");
            await File.WriteAllTextAsync(script, PythonServer);
            var args = new List<string> { script, port.ToString(CultureInfo.InvariantCulture), capacity.ToString(CultureInfo.InvariantCulture), (delayMs / 1000.0).ToString(CultureInfo.InvariantCulture), status.ToString(CultureInfo.InvariantCulture) };
            if (tls is not null)
            {
                args.Add(tls.Write(folder));
            }

            return args;
        }, tls is null ? "http" : "https");

    private const string PythonServer = """
        import ssl, sys, threading, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

        port, capacity, delay, status = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
        gate = threading.Semaphore(capacity)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self):
                if status == 200:
                    with gate:
                        time.sleep(delay)
                body = b"ok" if status == 200 else b"unavailable"
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 512

        server = Server(("127.0.0.1", port), Handler)
        if len(sys.argv) > 5:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[5])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        server.serve_forever()
        """;
}

/// <summary>A self-signed certificate for 127.0.0.1 and localhost, made in the test (no openssl needed).</summary>
internal sealed class SelfSignedCertificate : IDisposable
{
    private readonly X509Certificate2 _certificate;
    private readonly RSA _key;

    public SelfSignedCertificate()
    {
        _key = RSA.Create(2048);
        var request = new CertificateRequest("CN=fanout-probe-test", _key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddIpAddress(System.Net.IPAddress.Loopback);
        names.AddDnsName("localhost");
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        _certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
    }

    /// <summary>The certificate alone, PEM: what <c>--ca-file</c> takes.</summary>
    public string CertificatePem => _certificate.ExportCertificatePem();

    /// <summary>Writes the certificate and key as one PEM file in <paramref name="folder"/>; returns its path.</summary>
    public string Write(string folder)
    {
        var path = Path.Combine(folder, "server.pem");
        File.WriteAllText(path, CertificatePem + "\n" + _key.ExportPkcs8PrivateKeyPem() + "\n");
        return path;
    }

    public void Dispose()
    {
        _certificate.Dispose();
        _key.Dispose();
    }
}

/// <summary>A fact that needs a server binary: skipped, saying which and how .ci/run installs it, where it is missing.</summary>
[AttributeUsage(AttributeTargets.Method)]
public sealed class ServerFactAttribute : FactAttribute
{
    public ServerFactAttribute(string server)
    {
        var (found, install) = server switch
        {
            "apache" => (RealServers.Apache, "apache2"),
            "nginx" => (RealServers.Nginx, "nginx-light"),
            _ => (RealServers.Python, "python3"),
        };
        if (found is null)
        {
            Skip = $"{server} is not installed and could not be: .ci/run installs it with 'apt-get install -y {install}'.";
        }
    }
}
