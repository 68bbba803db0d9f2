#!/usr/bin/python3
"""Reference values for tests/privacy_audit/clopper_pearson_test.cpp (printed, pasted by hand).

Run with Debian 12's python3-scipy (1.10.1):
    /usr/bin/python3 tests/privacy_audit/clopper_pearson_reference.py

1. scipy.special.betainc (I_x(a, b)) and betainc(b, a, 1 - x) (its complement), at moderate
   a + b, where scipy is accurate.
2. Clopper-Pearson bounds from scipy.stats.beta: lower = beta.ppf(alpha, k, n - k + 1),
   upper = beta.isf(alpha, k + 1, n - k).
3. I_x(a, b) for integer a, b at a + b ~ 10^7, where scipy 1.10's betainc is NOT accurate (it
   returns 0.49926 for I_0.4(4e6, 6e6); the true value is 0.50002): the exact binomial tail
   P(Bin(a + b - 1, x) >= a), summed term by term in 60-digit decimal arithmetic with a Stirling
   series for log-gamma. Independent of scipy and of the C++ code.
"""
from decimal import Decimal as D, getcontext

from scipy import special, stats

getcontext().prec = 60
PI = D('3.14159265358979323846264338327950288419716939937510582097494459')
BERNOULLI = [D(1) / 6, D(-1) / 30, D(1) / 42, D(-1) / 30, D(5) / 66, D(-691) / 2730, D(7) / 6,
             D(-3617) / 510]


def lgamma(z):
    z, shift = D(z), D(0)
    while z < 1000:
        shift += z.ln()
        z += 1
    s = (z - D('0.5')) * z.ln() - z + (2 * PI).ln() / 2
    for k, b in enumerate(BERNOULLI, 1):
        s += b / (2 * k * (2 * k - 1) * z ** (2 * k - 1))
    return s - shift


def binomial_tails(k, n, x):
    """P(Bin(n, x) >= k) and P(Bin(n, x) <= k - 1), each summed outwards from k."""
    x = D(x)
    log_pmf = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) + k * x.ln() + (n - k) * (1 - x).ln()
    upper, t, j = D(0), log_pmf.exp(), k
    while j <= n:
        upper += t
        if t < upper * D('1e-40'):
            break
        t = t * (n - j) / (j + 1) * x / (1 - x)
        j += 1
    lower, j = D(0), k - 1
    t = log_pmf.exp() * k / (n - k + 1) * (1 - x) / x if k > 0 else D(0)
    while j >= 0:
        lower += t
        if t < lower * D('1e-40'):
            break
        t = t * j / (n - j + 1) * (1 - x) / x
        j -= 1
    return upper, lower


print('// scipy.special.betainc: {a, b, x, I_x(a, b), 1 - I_x(a, b)}')
for a, b, x in [(2.5, 3.5, 0.3), (1, 1, 0.7), (0.5, 0.5, 0.01), (10, 200, 0.02),
                (100000, 100000, 0.501), (30, 1e6, 2e-5)]:
    print(f'{{{a!r}, {b!r}, {x!r}, {special.betainc(a, b, x)!r}, {special.betainc(b, a, 1 - x)!r}}},')

print('// scipy.stats.beta: {k, n, alpha, lower, upper}')
for k, n, alpha in [(0, 100, 0.05), (1, 100, 0.05), (50, 100, 0.025), (100, 100, 0.05),
                    (7, 10, 1e-6), (3, 10**6, 1e-7), (600000, 10**6, 1.25e-7),
                    (8548, 10**6, 6.25e-8), (0, 10**6, 6.25e-8), (10**6, 10**6, 6.25e-8),
                    (4 * 10**6, 10**7, 2.5e-8), (85000, 10**7, 2.5e-8)]:
    lo = 0.0 if k == 0 else stats.beta.ppf(alpha, k, n - k + 1)
    hi = 1.0 if k == n else stats.beta.isf(alpha, k + 1, n - k)
    print(f'{{{k}, {n}, {alpha!r}, {lo!r}, {hi!r}}},')

print('// exact (decimal): {a, b, x, I_x(a, b), 1 - I_x(a, b)}')
for a, b, x in [(4000000, 6000000, 0.4), (5000000, 5000000, 0.4995), (2, 3000000, 1e-7)]:
    upper, lower = binomial_tails(a, a + b - 1, x)
    print(f'{{{a}, {b}, {x!r}, {float(upper)!r}, {float(lower)!r}}},')
