// The fleet tests start child processes and restart Redis: one test at a time keeps the 2-core machine's
// scheduling out of their lease timings.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
