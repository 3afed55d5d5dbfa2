"""Fit the rational erf approximation embed/bert's GELU uses:
erf(x) ~ x P(x^2) / Q(x^2) on |x| <= 3.925 (beyond it erf is 1 to within
2.9e-8), P and Q of degree 5, Q(0) = 1, by least squares on the linearised
error x P - erf Q with Lawson reweighting towards the minimax fit.

    python tools/modelconv/fit_erf.py    # prints the coefficients and the max error
"""

import numpy as np
from scipy.special import erf

X = 3.925
DEG = 5


def main():
    xs = np.concatenate([np.cos(np.linspace(0, np.pi, 4000)) * X / 2 + X / 2, np.linspace(0, X, 4000)])
    f = erf(xs)
    z = xs * xs
    A = np.concatenate(
        [np.stack([xs * z**i for i in range(DEG + 1)], 1), np.stack([-f * z**j for j in range(1, DEG + 1)], 1)], 1
    )
    w = np.ones_like(xs)
    for _ in range(30):
        sol, *_ = np.linalg.lstsq(A * w[:, None], f * w, rcond=None)
        P, Q = sol[: DEG + 1], np.concatenate([[1], sol[DEG + 1 :]])
        err = xs * np.polyval(P[::-1], z) / np.polyval(Q[::-1], z) - f
        w = w * (1 + np.abs(err) / np.abs(err).max())
    xt = np.linspace(0, X, 400001)
    zt = xt * xt
    e = np.abs(xt * np.polyval(P[::-1], zt) / np.polyval(Q[::-1], zt) - erf(xt)).max()
    print(f"max |error| on [0, {X}]: {e:.3g}; 1 - erf({X}) = {1 - erf(X):.3g}")
    print("P:", ", ".join(f"{c:.17g}" for c in P))
    print("Q:", ", ".join(f"{c:.17g}" for c in Q))


if __name__ == "__main__":
    main()
