namespace FanOut.Lab.Probing;

/// <summary>Fits the Universal Scalability Law by linear least squares, deterministically and without packages.</summary>
/// <remarks>
/// N / X(N) = a + b (N - 1) + c N (N - 1) with a = 1/lambda, b = sigma/lambda, c = kappa/lambda is linear in (a, b, c), so
/// ordinary least squares on (N, N/X) recovers the parameters of a noiseless curve exactly. Sigma and kappa must not be
/// negative: when the full fit gives a negative one, the fit is redone without it (kappa first), which is the constrained
/// least-squares optimum on that face. The quality R2 is computed on throughput itself, not on N/X.
/// </remarks>
public static class UslFit
{
    /// <summary>Fits <paramref name="points"/> (concurrency, throughput); null when no point has both positive.</summary>
    public static UslModel? Fit(IReadOnlyList<(double Concurrency, double Throughput)> points)
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
            var terms = 1 + (withSigma ? 1 : 0) + (withKappa ? 1 : 0);
            if (terms > distinct)
            {
                continue;
            }

            var coefficients = Solve(usable, withSigma, withKappa);
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
    private static (double A, double B, double C)? Solve((double N, double X)[] points, bool withSigma, bool withKappa)
    {
        var basis = new List<Func<double, double>> { _ => 1 };
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
            var y = n / x;
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

        var index = 1;
        var b = withSigma ? solution[index++] : 0;
        var c = withKappa ? solution[index] : 0;
        return (solution[0], b, c);
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
