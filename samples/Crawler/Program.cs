// Crawls the same number of pages from each site given, each site at the concurrency it affords.
// Usage: dotnet run --project samples/Crawler -- https://site-a.example/ https://site-b.example/ [--pages 100]
using FanOut;
using FanOut.Http;

using Microsoft.Extensions.DependencyInjection;

var pages = args.SkipWhile(a => a != "--pages").Skip(1).Select(int.Parse).FirstOrDefault(100);
var sites = args.TakeWhile(a => a != "--pages").Select(a => new Uri(a)).ToArray();
if (sites.Length == 0)
{
    Console.Error.WriteLine("crawler: give the sites to crawl, e.g. https://site-a.example/ https://site-b.example/ --pages 100");
    return 2;
}

// One adaptive limit per host: it finds what each host affords and backs off when one answers 429 or 503.
var limits = new HostConcurrencyLimits();
var services = new ServiceCollection();
services.AddHttpClient("crawler").AddFanOutLimit(limits);
await using var provider = services.BuildServiceProvider();
var http = provider.GetRequiredService<IHttpClientFactory>().CreateClient("crawler");

// The loop has no limit of its own (Unbounded): each host's limit holds its requests, so a slow host never holds back a fast one.
var urls = sites.SelectMany(site => Enumerable.Range(1, pages).Select(page => new Uri(site, $"item/{page}"))).ToArray();
// Outcomes stream in as pages complete; a page that failed is reported with its URL, the others go on.
var fetched = sites.ToDictionary(s => s.Authority, _ => (Pages: 0, Bytes: 0L));
var failed = 0;
var outcomes = urls.FanOutOutcomes(
    async (url, ct) => (await http.GetByteArrayAsync(url, ct)).LongLength,
    new FanOutOptions { Limit = ConcurrencyLimit.Unbounded });
await foreach (var outcome in outcomes)
{
    var url = urls[outcome.Index];
    if (outcome.Succeeded)
    {
        var (count, bytes) = fetched[url.Authority];
        fetched[url.Authority] = (count + 1, bytes + outcome.Result);
    }
    else
    {
        failed++;
        Console.WriteLine($"{url}: {outcome.Exception!.Message}");
    }
}

foreach (var site in sites)
{
    var limit = limits.GetLimit(site);
    Console.WriteLine($"{site.Authority}: fetched {fetched[site.Authority].Pages} of {pages} pages, {fetched[site.Authority].Bytes} bytes; limit now {limit.Current} (peak {limit.Peak})");
}

return failed == 0 ? 0 : 1;
