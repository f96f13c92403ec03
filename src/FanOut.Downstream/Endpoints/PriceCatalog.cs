namespace FanOut.Downstream.Endpoints;

/// <summary>The deterministic prices <c>GET /price/{id}</c> answers with.</summary>
public static class PriceCatalog
{
    /// <summary>The price of <paramref name="id"/>: the same on every run, server and machine, in [1.00, 999.99] with two decimals.</summary>
    /// <param name="id">The item id.</param>
    /// <returns>The price.</returns>
    /// <remarks>FNV-1a over the id's UTF-16 code units, not <see cref="string.GetHashCode()"/>, which is randomised per process.</remarks>
    public static decimal PriceOf(string id)
    {
        ArgumentNullException.ThrowIfNull(id);
        var hash = 14695981039346656037UL;
        foreach (var c in id)
        {
            hash = (hash ^ c) * 1099511628211UL;
        }

        return 1.00m + ((hash % 99_900UL) / 100m);
    }
}
