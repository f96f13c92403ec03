using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace FanOut.Redis.FleetWorker.Soak;

/// <summary>Admin commands to the soak's redis-server over a plain socket of their own (no client library state to survive faults).</summary>
internal static class RedisAdmin
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(5);

    /// <summary>Sends one command and returns the reply's lines (an array reply flattened, bulk strings as their text).</summary>
    /// <exception cref="InvalidOperationException">Redis answered with an error.</exception>
    public static async Task<List<string>> SendAsync(int port, params string[] command)
    {
        using var timeout = new CancellationTokenSource(s_timeout);
        using var client = new TcpClient();
        await client.ConnectAsync(IPAddress.Loopback, port, timeout.Token).ConfigureAwait(false);
        var stream = client.GetStream();
        var request = new StringBuilder().Append(CultureInfo.InvariantCulture, $"*{command.Length}\r\n");
        foreach (var part in command)
        {
            request.Append(CultureInfo.InvariantCulture, $"${Encoding.UTF8.GetByteCount(part)}\r\n{part}\r\n");
        }

        await stream.WriteAsync(Encoding.UTF8.GetBytes(request.ToString()), timeout.Token).ConfigureAwait(false);
        using var reader = new StreamReader(stream, Encoding.UTF8);
        var lines = new List<string>();
        await ReadAsync(reader, lines, timeout.Token).ConfigureAwait(false);
        return lines;
    }

    private static async Task ReadAsync(StreamReader reader, List<string> lines, CancellationToken token)
    {
        var line = await reader.ReadLineAsync(token).ConfigureAwait(false) ?? throw new IOException("Redis closed the connection");
        switch (line[0])
        {
            case '-':
                throw new InvalidOperationException(line[1..]);
            case '*':
                var count = int.Parse(line.AsSpan(1), CultureInfo.InvariantCulture);
                for (var i = 0; i < count; i++)
                {
                    await ReadAsync(reader, lines, token).ConfigureAwait(false);
                }

                break;
            case '$':
                if (line != "$-1")
                {
                    lines.Add(await reader.ReadLineAsync(token).ConfigureAwait(false) ?? string.Empty);
                }

                break;
            default:
                lines.Add(line[1..]);
                break;
        }
    }
}
