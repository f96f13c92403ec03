namespace FanOut.Lab.Probing;

/// <summary>Fits the Universal Scalability Law, deterministically and without packages: a linear start, then nonlinear
/// least squares on throughput (as R's <c>usl</c> package does), and a bootstrap over the points for its uncertainty.</summary>
/// <remarks>
/// <para>Start: N / X(N) = a + b (N - 1) + c N (N - 1) with a = 1/lambda, b = sigma/lambda, c = kappa/lambda is linear in
/// (a, b, c), so ordinary least squares on (N, N/X) recovers the parameters of a noiseless curve exactly. Sigma and kappa
/// must not be negative: when the full fit gives a negative one, the fit is redone without it (kappa first).</para>
/// <para>Refinement: that fit weighs the points by 1/X^2, so it is refined by Levenberg-Marquardt on the squared
/// throughput residuals, sigma and kappa kept at 0 or above (projected). The quality R2 is computed on throughput.</para>
/// </remarks>
public static class UslFit
{
    /// <summary>The most Levenberg-Marquardt iterations.</summary>
    private const int MaxIterations = 500;

    /// <summary>Fits <paramref name="points"/> (concurrency, throughput); null when no point has both positive.</summary>
    public static UslModel? Fit(IReadOnlyList<(double Concurrency, double Throughput)> points) => Fit(points, null);

    /// <summary>Fits <paramref name="points"/>; with <paramref name="fixedLambda"/>, lambda is held there and sigma and kappa
    /// come from Gunther's regression alone (N lambda / X - 1 = sigma (N - 1) + kappa N (N - 1), least squares through the
    /// origin), as R's <c>usl</c> did before version 2 with lambda = X(1); null when no point has both positive.</summary>
    public static UslModel? Fit(IReadOnlyList<(double Concurrency, double Throughput)> points, double? fixedLambda)
    {
        var start = FitLinear(points, fixedLambda);
        if (start is null || fixedLambda is not null)
        {
            return start;
        }

        var usable = points.Where(p => p.Concurrency >= 1 && p.Throughput > 0).ToArray();
        var refined = Refine(usable, start.Lambda, start.Sigma, start.Kappa, fitLambda: true);
        var candidate = Model(usable, 1 / refined.Lambda, refined.Sigma / refined.Lambda, refined.Kappa / refined.Lambda);
        return Sse(usable, start) < Sse(usable, candidate) ? start : candidate;
    }

    /// <summary>The linear fit alone (the start of <see cref="Fit(IReadOnlyList{ValueTuple{double, double}})"/>).</summary>
    public static UslModel? FitLinear(IReadOnlyList<(double Concurrency, double Throughput)> points) => FitLinear(points, null);

    private static UslModel? FitLinear(IReadOnlyList<(double Concurrency, double Throughput)> points, double? fixedLambda)
    {
        ArgumentNullException.ThrowIfNull(points);
        var usable = points.Where(p => p.Concurrency >= 1 && p.Throughput > 0).ToArray();
        if (usable.Length == 0)
        {
            return null;
        }

        var distinct = usable.Select(p => p.Concurrency).Distinct().Count();
        (bool Sigma, bool Kappa)[] faces = [(true, true), (true, false), (false, true), (false, false)];
        foreach (var (withSigma, withKappa) in faces)
        {
            var terms = (fixedLambda is null ? 1 : 0) + (withSigma ? 1 : 0) + (withKappa ? 1 : 0);
            if (terms == 0)
            {
                return Model(usable, 1 / fixedLambda!.Value, 0, 0);
            }

            if (terms > distinct)
            {
                continue;
            }

            var coefficients = Solve(usable, withSigma, withKappa, fixedLambda is { } l ? 1 / l : null);
            if (coefficients is null)
            {
                continue;
            }

            var (a, b, c) = coefficients.Value;
            if (a > 0 && b >= 0 && c >= 0)
            {
                return Model(usable, a, b, c);
            }
        }

        return null;
    }

    /// <summary>Levenberg-Marquardt on sum (X - lambda N / D)^2, D = 1 + sigma (N - 1) + kappa N (N - 1); sigma, kappa >= 0.</summary>
    private static (double Lambda, double Sigma, double Kappa) Refine((double N, double X)[] points, double lambda, double sigma, double kappa, bool fitLambda)
    {
        double[] p = [lambda, sigma, kappa];
        var sse = Sse(points, p);
        var damping = 1e-3;
        var free = fitLambda ? new[] { 0, 1, 2 } : new[] { 1, 2 };
        for (var iteration = 0; iteration < MaxIterations; iteration++)
        {
            var jtj = new double[3, 3];
            var jtr = new double[3];
            foreach (var (n, x) in points)
            {
                var d = 1 + (p[1] * (n - 1)) + (p[2] * n * (n - 1));
                var model = p[0] * n / d;
                double[] j = [n / d, -p[0] * n * (n - 1) / (d * d), -p[0] * n * n * (n - 1) / (d * d)];
                for (var a = 0; a < 3; a++)
                {
                    jtr[a] += j[a] * (x - model);
                    for (var b = 0; b < 3; b++)
                    {
                        jtj[a, b] += j[a] * j[b];
                    }
                }
            }

            var improved = false;
            while (damping < 1e12)
            {
                var size = free.Length;
                var system = new double[size, size + 1];
                for (var a = 0; a < size; a++)
                {
                    for (var b = 0; b < size; b++)
                    {
                        system[a, b] = jtj[free[a], free[b]] * (a == b ? 1 + damping : 1);
                    }

                    system[a, size] = jtr[free[a]];
                }

                var step = GaussianElimination(system, size);
                if (step is null)
                {
                    damping *= 10;
                    continue;
                }

                var trial = (double[])p.Clone();
                for (var a = 0; a < size; a++)
                {
                    trial[free[a]] += step[a];
                }

                trial[1] = Math.Max(0, trial[1]);
                trial[2] = Math.Max(0, trial[2]);
                var trialSse = trial[0] > 0 ? Sse(points, trial) : double.PositiveInfinity;
                if (trialSse < sse)
                {
                    var converged = sse - trialSse <= 1e-15 * Math.Max(1, sse);
                    (p, sse, improved) = (trial, trialSse, true);
                    damping = Math.Max(1e-12, damping / 10);
                    if (converged)
                    {
                        return (p[0], p[1], p[2]);
                    }

                    break;
                }

                damping *= 10;
            }

            if (!improved)
            {
                break;
            }
        }

        return (p[0], p[1], p[2]);
    }

    private static double Sse((double N, double X)[] points, double[] p) =>
        points.Sum(q => Math.Pow(q.X - (p[0] * q.N / (1 + (p[1] * (q.N - 1)) + (p[2] * q.N * (q.N - 1)))), 2));

    private static double Sse((double N, double X)[] points, UslModel model) => points.Sum(q => Math.Pow(q.X - model.Throughput(q.N), 2));

    private static UslModel Model((double N, double X)[] points, double a, double b, double c)
    {
        var lambda = 1 / a;
        var sigma = b / a;
        var kappa = c / a;
        double? peak = kappa > 0 && sigma < 1 ? Math.Sqrt((1 - sigma) / kappa) : null;
        var model = new UslModel(sigma, kappa, lambda, peak, 0);
        var mean = points.Average(p => p.X);
        var total = points.Sum(p => (p.X - mean) * (p.X - mean));
        var residual = points.Sum(p => (p.X - model.Throughput(p.N)) * (p.X - model.Throughput(p.N)));
        return model with { R2 = total > 0 ? 1 - (residual / total) : 1 };
    }

    /// <summary>Least squares of N/X on the chosen basis; null when the normal equations are singular.</summary>
    private static (double A, double B, double C)? Solve((double N, double X)[] points, bool withSigma, bool withKappa, double? fixedA)
    {
        var basis = new List<Func<double, double>>();
        if (fixedA is null)
        {
            basis.Add(_ => 1);
        }

        if (withSigma)
        {
            basis.Add(n => n - 1);
        }

        if (withKappa)
        {
            basis.Add(n => n * (n - 1));
        }

        var size = basis.Count;
        var matrix = new double[size, size + 1];
        foreach (var (n, x) in points)
        {
            var y = (n / x) - (fixedA ?? 0);
            for (var i = 0; i < size; i++)
            {
                for (var j = 0; j < size; j++)
                {
                    matrix[i, j] += basis[i](n) * basis[j](n);
                }

                matrix[i, size] += basis[i](n) * y;
            }
        }

        var solution = GaussianElimination(matrix, size);
        if (solution is null)
        {
            return null;
        }

        var index = fixedA is null ? 1 : 0;
        var b = withSigma ? solution[index++] : 0;
        var c = withKappa ? solution[index] : 0;
        return (fixedA ?? solution[0], b, c);
    }

    private static double[]? GaussianElimination(double[,] matrix, int size)
    {
        const double singular = 1e-12;
        for (var column = 0; column < size; column++)
        {
            var pivot = Enumerable.Range(column, size - column).MaxBy(r => Math.Abs(matrix[r, column]));
            if (Math.Abs(matrix[pivot, column]) < singular * Math.Max(1, Math.Abs(matrix[0, 0])))
            {
                return null;
            }

            for (var k = 0; k <= size; k++)
            {
                (matrix[column, k], matrix[pivot, k]) = (matrix[pivot, k], matrix[column, k]);
            }

            for (var row = 0; row < size; row++)
            {
                if (row == column)
                {
                    continue;
                }

                var factor = matrix[row, column] / matrix[column, column];
                for (var k = column; k <= size; k++)
                {
                    matrix[row, k] -= factor * matrix[column, k];
                }
            }
        }

        return Enumerable.Range(0, size).Select(i => matrix[i, size] / matrix[i, i]).ToArray();
    }
}
