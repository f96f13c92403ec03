using System.Net;

using FanOut.Downstream.Stats;

using Microsoft.AspNetCore.Http;

namespace FanOut.Downstream.Hosting;

/// <summary>Keeps the server on loopback: refuses to bind elsewhere, and answers 403 to non-loopback peers.</summary>
/// <remarks>
/// The bind check is the real guard (a loopback socket cannot be reached from another host); the
/// per-request check is defence in depth against a future change that binds wider.
/// </remarks>
internal static class LoopbackGuard
{
    /// <summary>True for 127.0.0.0/8, ::1, and those as IPv4-mapped IPv6 addresses; false for null.</summary>
    public static bool IsLoopback(IPAddress? address)
    {
        if (address is null)
        {
            return false;
        }

        if (address.IsIPv4MappedToIPv6)
        {
            address = address.MapToIPv4();
        }

        return IPAddress.IsLoopback(address);
    }

    /// <summary>Throws <see cref="ArgumentException"/> naming <paramref name="address"/> when it is not loopback.</summary>
    public static void ThrowIfNotLoopback(IPAddress address, string paramName)
    {
        if (!IsLoopback(address))
        {
            throw new ArgumentException(
                $"The downstream server binds to loopback only (127.0.0.0/8 or ::1); {address} is not loopback.", paramName);
        }
    }

    /// <summary>Middleware: answers 403 to a request whose remote address is not loopback.</summary>
    public static Func<HttpContext, RequestDelegate, Task> Middleware(ServerCounters counters)
        => (context, next) =>
        {
            if (IsLoopback(context.Connection.RemoteIpAddress))
            {
                return next(context);
            }

            counters.OnRejectedNotLoopback();
            context.Response.StatusCode = StatusCodes.Status403Forbidden;
            return Task.CompletedTask;
        };
}
