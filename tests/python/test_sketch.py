"""Sketch reports through the module: round trips, the merge's exactness (the sketch is linear,
001 Fact 4.11), and refusals of corrupt or mismatched input."""
import numpy as np
import pytest

import fedstat

HEADER = 80  # sdk/sketch/shift_sketch.h: the report's header bytes


@pytest.fixture(scope="module")
def counts():
    ranks = np.arange(1, 3001)
    return fedstat.ItemCounts(ranks * 7 + 1, (20000 / ranks**1.1).astype(np.int64) + 1)


@pytest.fixture(scope="module")
def params():
    return fedstat.params_for_budget(16384, seed=11)


def reports(counts, params, clients, seed=3):
    split = fedstat.split_across_clients(counts, clients, fedstat.SeededBits(seed, 7))
    return fedstat.sketch_clients(split, params)


def test_report_round_trip_and_layout(counts, params):
    (data,) = reports(counts, params, 1)
    r = fedstat.SketchReport(data)
    assert r.to_bytes() == data and len(r) == len(data)
    assert r.params == params and r.total == counts.total
    assert r.counters.shape == (params.rows, params.width)
    # The counters are the report's little-endian int64 words after the header, read here
    # independently of the SDK's parser.
    cells = params.rows * params.width
    raw = np.frombuffer(data[HEADER:HEADER + 8 * cells], dtype="<i8")
    assert np.array_equal(r.counters.ravel(), raw)
    assert 0 < len(r.heap_items) <= params.heap_capacity
    assert set(r.heap_items.tolist()) <= set(counts.ids.tolist())
    # bytes, bytearray and memoryview parse alike
    assert fedstat.SketchReport(bytearray(data)).to_bytes() == data
    assert fedstat.SketchReport(memoryview(data)).total == counts.total


def test_merge_of_a_split_equals_the_whole(counts, params):
    whole = fedstat.merge_reports(reports(counts, params, 1))
    parts = reports(counts, params, 4)
    assert len(parts) == 4
    merged = fedstat.merge_reports([fedstat.SketchReport(b) for b in parts])
    # Linear sketches: the four clients' counters sum to the one client's, exactly.
    assert np.array_equal(merged.counters, whole.counters)
    assert merged.total == whole.total == counts.total
    union = set()
    for b in parts:
        union |= set(fedstat.SketchReport(b).heap_items.tolist())
    assert merged.heap_items.tolist() == sorted(union)


def test_merged_sketch_from_arrays_estimates_alike(counts, params):
    p = fedstat.merge_reports(reports(counts, params, 2, seed=1))
    shifted = fedstat.ItemCounts(counts.ids + 5, counts.counts)
    q = fedstat.merge_reports(reports(shifted, params, 2, seed=2))
    rebuilt = fedstat.MergedSketch(p.params, p.counters, p.total, p.heap_items)
    a, b = fedstat.estimate_tv(p, q), fedstat.estimate_tv(rebuilt, q)
    assert (a.topk, a.hh, a.candidates) == (b.topk, b.hh, b.candidates)
    exact = fedstat.exact_tv(counts, shifted)
    assert exact == pytest.approx(1.0)  # disjoint supports
    assert abs(a.topk - exact) < 0.1 and abs(a.hh - exact) < 0.1
    # Under secure aggregation only counters are revealed: candidates from the known domain.
    hidden = fedstat.MergedSketch(p.params, p.counters, p.total)
    assert len(hidden.heap_items) == 0
    d = fedstat.estimate_tv(hidden, q, domain=int(shifted.ids.max()) + 1)
    assert abs(d.topk - exact) < 0.1


def test_corrupt_reports_are_refused_with_the_sdks_message(counts, params):
    (data,) = reports(counts, params, 1)
    flipped = bytearray(data)
    flipped[HEADER + 3] ^= 0x10
    with pytest.raises(ValueError, match="CRC mismatch"):
        fedstat.SketchReport(bytes(flipped))
    with pytest.raises(ValueError, match="wrong length|truncated"):
        fedstat.SketchReport(data[:-1])
    with pytest.raises(ValueError, match="bad magic"):
        fedstat.SketchReport(b"XXXX" + data[4:])
    other_version = bytearray(data)
    other_version[4] ^= 0xFF
    with pytest.raises(NotImplementedError, match="unknown version"):
        fedstat.SketchReport(bytes(other_version))
    with pytest.raises(ValueError, match="report 1: sketch report: CRC"):
        fedstat.merge_reports([data, bytes(flipped)])
    # A strided view is refused, not read as other bytes (or, reversed, past its end).
    doubled = bytes(b for byte in data for b in (byte, 0))
    with pytest.raises(ValueError, match="contiguous"):
        fedstat.SketchReport(memoryview(doubled)[::2])
    with pytest.raises(ValueError, match="contiguous"):
        fedstat.SketchReport(memoryview(data)[::-1])


def test_mismatched_sketches_are_refused(counts, params):
    a = reports(counts, params, 1)
    other = fedstat.params_for_budget(16384, seed=12)
    b = reports(counts, other, 1)
    with pytest.raises(ValueError, match="different parameters or seeds"):
        fedstat.merge_reports(a + b)
    with pytest.raises(ValueError, match="different parameters or seeds"):
        fedstat.estimate_tv(fedstat.merge_reports(a), fedstat.merge_reports(b))
    with pytest.raises(ValueError, match="no sketches"):
        fedstat.merge_reports([])
    p = fedstat.merge_reports(a)
    with pytest.raises(ValueError, match="counters must hold"):
        fedstat.MergedSketch(params, p.counters[:, :-1], p.total)


def test_parameters_are_checked_by_the_sdk(params):
    assert params.memory_bytes() <= 16384
    with pytest.raises(ValueError, match="params_for_budget"):
        fedstat.params_for_budget(100, seed=1)  # below the SDK's 1 KiB
    with pytest.raises(ValueError, match="params_for_budget"):
        fedstat.params_for_budget(16384, seed=1, heap_fraction=float("nan"))
    with pytest.raises(ValueError, match="SketchParams"):
        fedstat.SketchParams(rows=0)
    with pytest.raises(ValueError, match="seed must be an int or 32 bytes"):
        fedstat.SketchParams(seed=b"short")
    with pytest.raises(ValueError, match="budget must be a whole number"):
        fedstat.params_for_budget(-1, seed=1)
    assert fedstat.SketchParams(seed=7).seed == fedstat.seed_from_u64(7)
    with pytest.raises(ValueError, match="tau must be finite"):
        m = fedstat.merge_reports(reports(fedstat.ItemCounts([1], [5]), params, 1))
        fedstat.estimate_tv(m, m, tau=float("nan"))
