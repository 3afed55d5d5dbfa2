"""Fits the polynomials of the erf-GELU and exp of vec_amd64.s and attn_amd64.s.

Run with numpy and scipy (the repo's conversion venv has both):

    python internal/linalg/testdata/fit_gelu.py

It prints vconst_amd64.h's constant table (its #defines and DATA lines). The method:

  GELU(x) = x·Φ(x) and Φ(x) = ½·erfc(−x/√2), so with z = |x|/√2,
  Φ = ½·erfc(z) for x < 0 and 1 − ½·erfc(z) otherwise. Computing erfc (not
  1 + erf) keeps the relative error small for negative x, where GELU is tiny.
  erfc(z) = e^(−z²) · t · g(t) with t = 1/(1 + 0.3·z): g is smooth on (0, 1]
  (g(1) = 1, g(0) = 0.3/√π), and a degree-8 polynomial fits it to 2e-8
  relative over z ∈ [0, 10] (iteratively reweighted least squares towards
  minimax, against scipy's erfcx). e^y is 2ⁿ·(1 + r + r²·q(r)) with
  n = round(y·log₂e), r = y − n·ln 2 (two-part ln 2) and a degree-4 q fitted
  on |r| ≤ ln2/2 to 3e-9. Simulated in float32 with fused multiply-adds, the
  GELU stays within 3.6e-7 relative of the exact value on [−13, 10].
"""
import struct

import numpy as np
from scipy.special import erfcx

P = 0.3


def fit_g(deg=8, zmax=10.0, iters=30):
    t = np.linspace(1 / (1 + P * zmax), 1.0, 20000)
    z = (1 - t) / (P * t)
    f = erfcx(z) / t
    w = np.ones_like(t)
    for _ in range(iters):
        V = np.vander(t, deg + 1)
        A = V / f[:, None] * np.sqrt(w)[:, None]
        coef, *_ = np.linalg.lstsq(A, np.sqrt(w), rcond=None)
        err = np.abs((V @ coef) / f - 1)
        w = w * (err / err.max() + 1e-3)
        w /= w.sum()
    return coef


def fit_q(deg=6, iters=30):
    r = np.linspace(-np.log(2) / 2, np.log(2) / 2, 20001)
    f = np.exp(r)
    w = np.ones_like(r)
    for _ in range(iters):
        V = np.vander(r, deg - 1)
        A = V * (r**2 / f)[:, None] * np.sqrt(w)[:, None]
        b = (f - 1 - r) / f * np.sqrt(w)
        q, *_ = np.linalg.lstsq(A, b, rcond=None)
        err = np.abs((1 + r + r**2 * (V @ q)) / f - 1)
        w = w * (err / err.max() + 1e-3)
        w /= w.sum()
    return q


def bits(v):
    return struct.unpack("<I", struct.pack("<f", np.float32(v)))[0]


def main():
    consts = [("GELU_P", P / np.sqrt(2), "0.3/√2: t = 1/(1 + GELU_P·|x|)")]
    consts += [("GELU_G%d" % i, c, "g, t^%d" % (8 - i)) for i, c in enumerate(fit_g())]
    consts += [
        ("EXP_MIN", -87.0, "e^-87 is still a normal float32"),
        ("EXP_MAX", 88.0, "e^88 is still finite"),
        ("LOG2E", 1 / np.log(2), "log2(e)"),
        ("LN2HI", 0.693359375, "ln 2, high part"),
        ("LN2LO", 0.6931471805599453 - 0.693359375, "ln 2 - LN2HI"),
    ]
    consts += [("EXP_Q%d" % i, c, "q, r^%d" % (4 - i)) for i, c in enumerate(fit_q())]
    consts += [
        ("ONE", 1.0, ""),
        ("HALF", 0.5, ""),
        ("GELU_CLAMP", 20.0, "|x| past which Phi is 0 or 1 in float32"),
        ("ABS_MASK", None, "clears the sign bit"),
        ("SIGN_BIT", None, "the sign bit"),
        ("NEG_INF", None, "-Inf"),
    ]
    raw = {"ABS_MASK": 0x7FFFFFFF, "SIGN_BIT": 0x80000000, "NEG_INF": 0xFF800000}
    for i, (name, v, _) in enumerate(consts):
        print("#define %s %d" % (name, 4 * i))
    for i, (name, v, comment) in enumerate(consts):
        b = raw[name] if v is None else bits(v)
        val = "" if v is None else " = %r" % float(np.float32(v))
        print("DATA vconst<>+%d(SB)/4, $0x%08x // %s%s%s" % (4 * i, b, name, val, (", " + comment) if comment else ""))
    print("GLOBL vconst<>(SB), RODATA|NOPTR, $%d" % (4 * len(consts)))


if __name__ == "__main__":
    main()
