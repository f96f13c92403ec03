namespace FanOut.Lab.Probing;

/// <summary>What a probe reports while it runs (called from the probe's own flow, one call at a time).</summary>
public interface IProbeProgress
{
    /// <summary>A level with <paramref name="concurrency"/> workers starts.</summary>
    void LevelStarted(int concurrency);

    /// <summary>A level finished, with what the level-stopping rule made of it.</summary>
    void LevelFinished(LevelResult level, LevelVerdict verdict);

    /// <summary>A step between levels (the refinement, the rate check), in one line.</summary>
    void Note(string message);
}
