"""Item counts, seeds and emulated clients through the module: the file reader against the
text, arrays validated by the file's rules, and the split across clients conserving every count."""
import numpy as np
import pytest

import fedstat


def test_reader_and_arrays_agree(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("# a comment\n7 3\n\n2 10\n4294967295 1\n")
    c = fedstat.read_item_counts(str(path))
    assert c.ids.tolist() == [2, 7, 4294967295] and c.ids.dtype == np.uint32
    assert c.counts.tolist() == [10, 3, 1] and c.counts.dtype == np.int64
    assert c.total == 14 and len(c) == 3 and c.count(7) == 3 and c.count(8) == 0
    same = fedstat.ItemCounts(np.array([4294967295, 7, 2], dtype=np.uint64), [1, 3, 10])
    assert same.ids.tolist() == c.ids.tolist() and same.counts.tolist() == c.counts.tolist()
    text = fedstat.parse_item_counts(path.read_text(), "inline")
    assert text.total == c.total
    assert fedstat.exact_tv(c, same) == 0.0


@pytest.mark.parametrize("text, message", [
    ("1 5\n2 five\n", "bad.txt:2: expected a count"),
    ("1 5\n1 6\n", "bad.txt:2: item 1 already appeared on line 1"),
    ("1 0\n", "bad.txt:1: count must be positive"),
    ("-1 5\n", "bad.txt:1: expected"),
    ("1 9223372036854775808\n", "bad.txt:1: expected a count"),
    ("", "no items"),
])
def test_malformed_files_name_the_line(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        fedstat.read_item_counts(str(path))


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        fedstat.read_item_counts(str(tmp_path / "missing.txt"))


@pytest.mark.parametrize("ids, counts, error, message", [
    ([1, 2], [5, 0], ValueError, "counts\\[1\\] = 0"),
    ([1, 2], [5, -3], ValueError, "counts\\[1\\] = -3"),
    ([1, 2**32], [5, 3], ValueError, "ids\\[1\\] = 4294967296"),
    ([-1], [5], ValueError, "ids\\[0\\] = -1"),
    ([1, 1], [5, 3], ValueError, "item 1 appears twice"),
    ([1, 2], [2**62, 2**62], ValueError, "below 2\\^63"),
    ([1, 2], [5], ValueError, "differ in length"),
    ([], [], ValueError, "at least one item"),
    ([1.5], [5], TypeError, "ids must hold integers"),
    ([1], [np.nan], TypeError, "counts must hold integers"),
    ([[1, 2]], [[5, 3]], ValueError, "one-dimensional"),
])
def test_arrays_follow_the_files_rules(ids, counts, error, message):
    with pytest.raises(error, match=message):
        fedstat.ItemCounts(ids, counts)


def test_split_conserves_every_count():
    ids = np.arange(0, 5000, 3)
    c = fedstat.ItemCounts(ids, (ids % 17) + 1)
    clients = fedstat.split_across_clients(c, 6, fedstat.SeededBits(9, 7))
    assert len(clients) == 6
    summed = {}
    for i in range(6):
        client_ids, counts = clients.histogram(i)
        assert len(client_ids) > 0  # 9,000-odd units over 6 clients: none is empty
        for k, n in zip(client_ids.tolist(), counts.tolist()):
            summed[k] = summed.get(k, 0) + n
    assert summed == dict(zip(c.ids.tolist(), c.counts.tolist()))
    # The same seed and stream split alike; another stream differently.
    again = fedstat.split_across_clients(c, 6, fedstat.SeededBits(9, 7))
    other = fedstat.split_across_clients(c, 6, fedstat.SeededBits(9, 8))
    assert all(np.array_equal(clients.histogram(i)[1], again.histogram(i)[1]) for i in range(6))
    assert any(not np.array_equal(clients.histogram(i)[0], other.histogram(i)[0])
               for i in range(6))
    with pytest.raises(IndexError):
        clients.histogram(6)
    with pytest.raises(ValueError, match="clients must be a whole number"):
        fedstat.split_across_clients(c, 0, fedstat.SeededBits(1))


def test_seeds():
    assert fedstat.seed_from_u64(1) == b"\x01" + bytes(31)
    assert fedstat.seed_from_u64(2**64 - 1) == b"\xff" * 8 + bytes(24)
    with pytest.raises(ValueError, match="seed must be a whole number"):
        fedstat.SeededBits(-1)
    with pytest.raises(TypeError, match="seed must be an integer"):
        fedstat.SeededBits(1.0)
    assert fedstat.__version__.count(".") == 2
