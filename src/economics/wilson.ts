/**
 * The Wilson score interval for a binomial proportion: the 95 % interval reported for a
 * tool's measured malformation rate p_err.
 * Wilson rather than the normal approximation because p_err is usually near 0 and samples
 * are small, where the normal interval collapses to [0, 0] or leaves [0, 1].
 */
import { ToolgateError } from "../core/errors.js";

/** z for a two-sided 95 % interval (the 0.975 quantile of the standard normal). */
export const Z95 = 1.959963984540054;

export interface Interval {
  /** Point estimate successes / trials (0 when trials is 0). */
  p: number;
  low: number;
  high: number;
}

/**
 * Wilson score interval for `successes` out of `trials`. With no trials nothing is known:
 * the interval is [0, 1].
 */
export function wilsonInterval(successes: number, trials: number, z: number = Z95): Interval {
  if (!Number.isInteger(trials) || trials < 0) {
    throw new ToolgateError("invalid_input", `trials must be a non-negative integer; received ${trials}`);
  }
  if (!Number.isInteger(successes) || successes < 0 || successes > trials) {
    throw new ToolgateError(
      "invalid_input",
      `successes must be an integer in [0, trials=${trials}]; received ${successes}`,
    );
  }
  if (!(z > 0) || !Number.isFinite(z))
    throw new ToolgateError("invalid_input", `z must be a positive number; received ${z}`);
  if (trials === 0) return { p: 0, low: 0, high: 1 };
  const n = trials;
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At 0 of n (n of n) the end is exactly 0 (1); the formula leaves rounding noise of ±1e-17 there.
  const low = successes === 0 ? 0 : Math.max(0, centre - half);
  const high = successes === n ? 1 : Math.min(1, centre + half);
  return { p, low, high };
}
