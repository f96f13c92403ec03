// Every test starts a real Kestrel server; running them one at a time keeps the 2-core machine's
// scheduling noise out of the latency checks, and the whole run is still a few seconds.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
