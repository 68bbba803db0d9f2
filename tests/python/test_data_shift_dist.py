"""The DIST data-shift path through the module (issue 41; host_server/estimate/hashed_tv.h and
dist_shift.h): the hashed TV estimator on hand-made vectors, the words' signed reading, the
reference's buckets, and a device's vector from the SDK's builder (exact counts when the noise
is negligible, its noise seeded or not, s devices' shares summing to one discrete Laplace)."""
import math

import numpy as np
import pytest

import fedstat


def tv_of(p, q):
    """½·Σ|p/N_p − q/N_q| over the counts clamped to [0, ∞), written here independently."""
    p = np.clip(np.asarray(p, dtype=float), 0, None)
    q = np.clip(np.asarray(q, dtype=float), 0, None)
    return 0.5 * np.abs(p / p.sum() - q / q.sum()).sum()


@pytest.fixture(scope="module")
def items():
    ranks = np.arange(1, 301)
    return fedstat.ItemCounts(ranks * 13 + 5, (3000 / ranks).astype(np.int64) + 1)


def test_hashed_tv_hand_example():
    # P = (3/4, 1/4, 0, 0), Q = (1/4, 1/4, 1/2, 0): D_TV = ½(1/2 + 0 + 1/2) = 1/2.
    e = fedstat.estimate_hashed_tv([3, 1, 0, 0], [1, 1, 2, 0])
    assert e.tv == pytest.approx(0.5, abs=1e-15)
    assert (e.total_p, e.total_q, e.buckets, e.negative_p, e.threshold) == (4, 4, 4, 0, 0)
    # A negative (noised) bucket is clamped to 0: the same distribution, counted in negative_p;
    # the totals are the clamped sums (P scaled by 2 is the same distribution).
    e = fedstat.estimate_hashed_tv(np.array([6, 2, -3, 0]), [1, 1, 2, 0])
    assert e.tv == pytest.approx(0.5, abs=1e-15)
    assert (e.total_p, e.negative_p) == (8, 1)
    assert fedstat.estimate_hashed_tv([5, 0, 2], [5, 0, 2]).tv == 0
    assert fedstat.estimate_hashed_tv([1, 0], [0, 7]).tv == 1


def test_hashed_tv_equals_the_formula_on_the_reference_buckets(items):
    other = fedstat.ItemCounts(items.ids[::2], items.counts[::2] * 3 + 1)
    p = fedstat.bucket_counts(items, 9, 256)
    q = fedstat.bucket_counts(other, 9, 256)
    assert fedstat.estimate_hashed_tv(p, q).tv == pytest.approx(tv_of(p, q), rel=1e-12)
    # Collisions only cancel mass: the bucketed distance is at most the exact one.
    assert fedstat.estimate_hashed_tv(p, q).tv <= fedstat.exact_tv(items, other) + 1e-12


def test_hashed_tv_threshold_under_large_noise():
    # B = 1000, T = 10: the phantom mass B·E[η⁺] ≈ 5,000 exceeds half of P's 419 events, so the
    # threshold τ = ⌈max(1, T·ln B, σ·√(2 ln B))⌉ (hashed_tv.h) applies to both sides.
    buckets, scale = 1000, 10.0
    p = np.zeros(buckets, dtype=np.int64)
    q = np.zeros(buckets, dtype=np.int64)
    p[:4] = [300, 50, 69, -5]
    q[0] = 300
    rho = math.exp(-1 / scale)
    sigma = math.sqrt(2 * rho) / (1 - rho)
    log_b = math.log(buckets)
    tau = math.ceil(max(1, scale * log_b, sigma * math.sqrt(2 * log_b)))
    assert tau == 70
    e = fedstat.estimate_hashed_tv(p, q, noise_scale=scale)
    assert e.threshold == tau and e.total_p == 300 and e.tv == 0  # 50 and 69 are below τ
    # Without the scale, only the clamp: the 119 events count.
    e = fedstat.estimate_hashed_tv(p, q)
    assert e.threshold == 0 and e.tv == pytest.approx(119 / 419, rel=1e-12)
    # laplaces = L widens σ by √L: τ = ⌈σ_L·√(2 ln B)⌉ once that exceeds T·ln B.
    e = fedstat.estimate_hashed_tv(p, q, noise_scale=scale, laplaces=16)
    assert e.threshold == math.ceil(4 * sigma * math.sqrt(2 * log_b)) == 211
    assert e.total_p == 300 and e.tv == 0


def test_hashed_tv_refusals():
    with pytest.raises(ValueError, match="same number of buckets"):
        fedstat.estimate_hashed_tv([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="no positive bucket"):
        fedstat.estimate_hashed_tv([0, -1], [1, 2])
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="noise_scale"):
            fedstat.estimate_hashed_tv([1, 2], [1, 2], noise_scale=bad)
    with pytest.raises(ValueError, match="laplaces"):
        fedstat.estimate_hashed_tv([1, 2], [1, 2], laplaces=0.5)
    with pytest.raises(TypeError, match="p must hold integers"):
        fedstat.estimate_hashed_tv([1.5, 2], [1, 2])


def test_signed_sum():
    got = fedstat.signed_sum([0, 1, 2**31 - 1, 2**31, 2**32 - 1], 32)
    assert got.dtype == np.int64
    assert got.tolist() == [0, 1, 2**31 - 1, -(2**31), -1]
    assert fedstat.signed_sum(np.array([2**64 - 1, 2**63, 5], dtype=np.uint64), 64).tolist() == [
        -1, -(2**63), 5]
    assert fedstat.signed_sum([3, 2, 1], 2).tolist() == [-1, -2, 1]


def test_signed_sum_refusals():
    for bits in (0, 65):
        with pytest.raises(ValueError, match="bits"):
            fedstat.signed_sum([1], bits)
    with pytest.raises(ValueError, match=r"words\[1\] = 4294967296 is not below 2\^bits"):
        fedstat.signed_sum([1, 2**32], 32)
    with pytest.raises(ValueError, match=r"words\[0\]"):
        fedstat.signed_sum([-1], 32)


def test_bucket_counts(items):
    whole = fedstat.bucket_counts(items, 21, 64)
    assert whole.dtype == np.int64 and whole.shape == (64,) and whole.sum() == items.total
    # Linear in the items: each item alone is its count in one bucket, and they add up.
    summed = np.zeros(64, dtype=np.int64)
    for item, count in zip(items.ids[:40], items.counts[:40]):
        one = fedstat.bucket_counts(fedstat.ItemCounts([item], [count]), 21, 64)
        assert np.count_nonzero(one) == 1 and one.sum() == count
        summed += one
    head = fedstat.ItemCounts(items.ids[:40], items.counts[:40])
    assert np.array_equal(summed, fedstat.bucket_counts(head, 21, 64))
    # An int seed is seed_from_u64's 32 bytes; another seed is another bucket function.
    assert np.array_equal(whole, fedstat.bucket_counts(items, fedstat.seed_from_u64(21), 64))
    assert not np.array_equal(whole, fedstat.bucket_counts(items, 22, 64))
    for bad in (0, 2**22 + 1):
        with pytest.raises(ValueError, match="buckets"):
            fedstat.bucket_counts(items, 21, bad)


def test_noise_scale_and_config():
    assert fedstat.dist_shift_noise_scale(3) == pytest.approx(1 / 3)
    assert fedstat.dist_shift_noise_scale(3, 100) == pytest.approx(200 / 3)  # Δ = 2m
    for bad in (0, -1, math.nan, math.inf):
        with pytest.raises(ValueError, match="epsilon"):
            fedstat.dist_shift_noise_scale(bad)
    c = fedstat.DistShiftConfig(noise_scale=fedstat.dist_shift_noise_scale(2, 10), max_events=10)
    assert (c.buckets, c.bits, c.max_events, c.max_clients, c.shares) == (40960, 32, 10, 1, 1)
    assert c.epsilon == pytest.approx(2)
    assert fedstat.DistShiftConfig(noise_scale=0.5).epsilon == pytest.approx(2)


@pytest.mark.parametrize("kwargs, name", [
    (dict(bits=16, noise_scale=1), "bits"),
    (dict(bits=64.0, noise_scale=1), "bits"),
    (dict(buckets=0, noise_scale=1), "buckets"),
    (dict(buckets=2**22 + 1, noise_scale=1), "buckets"),
    (dict(noise_scale=-1), "noise_scale"),
    (dict(noise_scale=0), "noise_scale"),
    (dict(noise_scale=math.nan), "noise_scale"),
    (dict(noise_scale=2e4), "noise_scale"),
    (dict(), "noise_scale is required"),
    (dict(shares=0, noise_scale=1), "shares"),
    (dict(max_clients=0, noise_scale=1), "max_clients"),
    (dict(max_events=-1, noise_scale=1), "max_events"),
    (dict(max_clients=2**32 - 1, noise_scale=1), "max_clients"),  # clamp (2^31 - 1)/n = 0
])
def test_config_refusals(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=name):
        fedstat.DistShiftConfig(**kwargs)


def test_device_vector_is_the_exact_buckets_when_the_noise_is_negligible(items):
    # T = 0.01: ρ = e^-100, so no bucket's share is nonzero but with probability ~1e-40.
    for bits in (32, 64):
        c = fedstat.DistShiftConfig(buckets=512, bits=bits, noise_scale=0.01)
        v = fedstat.dist_shift_device_vector(items, c, 5, noise_seed=1)
        assert v.dtype == np.uint64 and v.shape == (512,)
        assert np.array_equal(fedstat.signed_sum(v, bits), fedstat.bucket_counts(items, 5, 512))
    # A device holding nothing sends zeros (its share alone).
    c = fedstat.DistShiftConfig(buckets=512, noise_scale=0.01)
    assert not fedstat.dist_shift_device_vector(None, c, 5, noise_seed=1).any()


def test_device_vector_user_level_bound_and_clamp(items):
    # m = 50 events of N = items.total: exactly m events, all in the items' buckets.
    c = fedstat.DistShiftConfig(buckets=512, max_events=50, noise_scale=0.01)
    v = fedstat.signed_sum(fedstat.dist_shift_device_vector(items, c, 5, noise_seed=2), 32)
    exact = fedstat.bucket_counts(items, 5, 512)
    assert v.sum() == 50 and v.min() >= 0 and not v[exact == 0].any()
    # max_clients n: each bucket at most (2^31 - 1) // n before the noise.
    n = 10**7  # the SDK's most for a (sparse-graph) task
    c = fedstat.DistShiftConfig(buckets=512, max_clients=n, noise_scale=0.01)
    v = fedstat.signed_sum(fedstat.dist_shift_device_vector(items, c, 5, noise_seed=2), 32)
    assert np.array_equal(v, np.minimum(exact, (2**31 - 1) // n))
    assert exact.max() > 214  # the clamp (214) bit


def test_device_vector_noise_seed(items):
    c = fedstat.DistShiftConfig(buckets=256, noise_scale=1)
    a = fedstat.dist_shift_device_vector(items, c, 5, noise_seed=7)
    assert np.array_equal(a, fedstat.dist_shift_device_vector(items, c, 5, noise_seed=7))
    assert not np.array_equal(a, fedstat.dist_shift_device_vector(items, c, 5, noise_seed=8))
    # The CSPRNG (no seed): noise, not the exact counts.
    fresh = fedstat.signed_sum(fedstat.dist_shift_device_vector(items, c, 5), 32)
    assert not np.array_equal(fresh, fedstat.bucket_counts(items, 5, 256))
    # Client c of dist_shift_clients draws from stream 1 + c: one client is the device above.
    one = fedstat.split_across_clients(items, 1, fedstat.SeededBits(0, 0))
    (v,) = fedstat.dist_shift_clients(one, c, 5, noise_seed=7)
    assert np.array_equal(v, a)
    # Two clients' vectors at negligible noise add up to the whole histogram's buckets, and the
    # second client's noise is not the first's (stream 2, not 1).
    split = fedstat.split_across_clients(items, 2, fedstat.SeededBits(1, 7))
    quiet = fedstat.DistShiftConfig(buckets=256, max_clients=2, noise_scale=0.01)
    two = fedstat.dist_shift_clients(split, quiet, 5, noise_seed=7)
    assert len(two) == 2
    assert np.array_equal(sum(fedstat.signed_sum(w, 32) for w in two),
                          fedstat.bucket_counts(items, 5, 256))
    noisy = fedstat.dist_shift_clients(split, c, 5, noise_seed=7)
    shares = [fedstat.signed_sum(w, 32) - fedstat.signed_sum(q, 32) for w, q in zip(noisy, two)]
    assert shares[0].any() and not np.array_equal(shares[0], shares[1])


def test_shares_of_s_devices_sum_to_one_discrete_laplace():
    # s = 5 devices holding nothing, each adding one share of the discrete Laplace(T) split 5
    # ways: their sum is one discrete Laplace(T) per bucket — mean 0, variance 2ρ/(1 − ρ)²
    # (ρ = e^{-1/T}). Fixed seeds; B = 4,096 buckets: the mean's s.d. is √(var/B) ≈ 0.044 (bound
    # 5 s.d.); the sample variance's relative s.d. is √((κ − 1)/B) ≈ 0.035 for the Laplace's
    # kurtosis κ ≈ 6 (bound 0.2). Shares of a whole Laplace each would give 5× the variance.
    buckets, scale, s = 4096, 2, 5
    c = fedstat.DistShiftConfig(buckets=buckets, shares=s, max_clients=s, noise_scale=scale)
    words = [fedstat.dist_shift_device_vector(None, c, 3, noise_seed=10 + d) for d in range(s)]
    total = np.zeros(buckets, dtype=np.uint64)
    for w in words:
        total = (total + w) & np.uint64(2**32 - 1)
    x = fedstat.signed_sum(total, 32).astype(float)
    rho = math.exp(-1 / scale)
    var = 2 * rho / (1 - rho) ** 2
    assert abs(x.mean()) < 5 * math.sqrt(var / buckets)
    assert x.var() == pytest.approx(var, rel=0.2)
    # Each device's vector is a share, not the sum: its variance is far below one Laplace's
    # (NB(1/s) − NB(1/s) has variance var/s).
    one = fedstat.signed_sum(words[0], 32).astype(float)
    assert one.var() == pytest.approx(var / s, rel=0.3)
