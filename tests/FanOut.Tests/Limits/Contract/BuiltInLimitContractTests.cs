using FanOut.Limits.Contract;

namespace FanOut.Tests.Limits.Contract;

/// <summary><see cref="ConcurrencyLimit.Fixed"/> passes the limit contract.</summary>
public sealed class FixedLimitContractTests : ConcurrencyLimitContract
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) => new(ConcurrencyLimit.Fixed(capacity));
}

/// <summary><see cref="ConcurrencyLimit.Unbounded"/> passes the parts of the contract that do not fill it.</summary>
public sealed class UnboundedLimitContractTests : ConcurrencyLimitContract
{
    protected override bool HasCap => false;

    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) => new(ConcurrencyLimit.Unbounded);
}

/// <summary><see cref="ConcurrencyLimit.Adaptive"/>, pinned to one value, passes the limit contract (its learning hooks included).</summary>
public sealed class AdaptiveLimitContractTests : ConcurrencyLimitContract
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) =>
        new(ConcurrencyLimit.Adaptive(new AdaptiveLimitOptions { MinLimit = capacity, InitialLimit = capacity, MaxLimit = capacity }));
}

/// <summary><see cref="ConcurrencyLimit.Settable"/>, created at 1 and set to the capacity, passes the limit contract.</summary>
public sealed class SettableLimitContractTests : ConcurrencyLimitContract
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity)
    {
        var limit = ConcurrencyLimit.Settable(1);
        limit.Set(capacity);
        return new(limit);
    }
}

/// <summary>A key of a partitioned limit whose own limit binds (the global cap is larger) passes the limit contract.</summary>
public sealed class PartitionKeyLimitContractTests : ConcurrencyLimitContract
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) =>
        new(ConcurrencyLimit.Partitioned<string>(capacity * 10, _ => ConcurrencyLimit.Fixed(capacity)).ForKey("tenant-a"));
}

/// <summary>A key of a partitioned limit whose global cap binds (its own limit is larger) passes the limit contract.</summary>
public sealed class PartitionGlobalCapContractTests : ConcurrencyLimitContract
{
    protected override ValueTask<ConcurrencyLimit> CreateAsync(int capacity) =>
        new(ConcurrencyLimit.Partitioned<string>(capacity, _ => ConcurrencyLimit.Fixed(capacity * 10)).ForKey("tenant-a"));
}
