namespace FanOut.Lab.Workloads;

/// <summary>What a <see cref="FailingWorkload"/> item throws: it names its item, so the lab can tell which failures a strategy let the caller reach.</summary>
public sealed class ItemFailedException : Exception
{
    /// <summary>Creates the exception for item <paramref name="item"/>.</summary>
    public ItemFailedException(int item)
        : base($"item {item} failed")
    {
        Item = item;
    }

    /// <summary>Creates the exception with a message (item -1).</summary>
    public ItemFailedException()
        : this(-1)
    {
    }

    /// <summary>Creates the exception with a message and an inner exception (item -1).</summary>
    public ItemFailedException(string message, Exception innerException)
        : base(message, innerException)
    {
        Item = -1;
    }

    /// <summary>Creates the exception with a message (item -1).</summary>
    public ItemFailedException(string message)
        : base(message)
    {
        Item = -1;
    }

    /// <summary>The index of the item that threw.</summary>
    public int Item { get; }
}
