#!/usr/bin/env python3
"""Writes the data-shift example pairs used in docs/benchmarks.md and the closing measurements of
the data-shift sketch (fedstat-tv), as '<item_id> <count>' files in OUT_DIR:

  zipf_p.txt / zipf_q.txt   10^6 draws each from Zipf(1.2) and Zipf(1.4) over 350,000 items
  zbig_p.txt / zbig_q.txt   the same pair with 10^8 draws each (every item occurs; seed 13)
  man1.txt / man8.txt       word counts of the English man pages in sections 1 and 8
  man1a.txt / man1b.txt     word counts of two halves of section 1 (alternating files)
  man3.txt                  word counts of section 3 (library calls), against man1 for a large shift

Words are lower-cased runs of letters, id = 32-bit FNV-1a of the word. The man pages are whatever
this machine has installed (Debian 12 here), read with gzip. Seeds fixed.

usage: /usr/bin/python3 scripts/make_tv_examples.py OUT_DIR [zipf] [zbig] [man]
       (needs python3-numpy; naming groups writes only those, e.g. `zipf` for the small Zipf pair
       the Python tests and examples/python use; default: all three)
"""
import collections
import glob
import gzip
import re
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "."
groups = sys.argv[2:] or ["zipf", "zbig", "man"]
unknown = set(groups) - {"zipf", "zbig", "man"}
if unknown:
    sys.exit(f"make_tv_examples: unknown group(s) {sorted(unknown)}: zipf, zbig or man")


def write(name, counts):
    with open(f"{out}/{name}", "w") as f:
        for item, count in sorted(counts.items()):
            if count > 0:
                f.write(f"{item} {count}\n")


n = 350000
ranks = np.arange(1, n + 1, dtype=np.float64)


def zipf_pair(seed, draws, names):
    rng = np.random.default_rng(seed)
    for name, skew in zip(names, (1.2, 1.4)):
        p = ranks ** -skew
        p /= p.sum()
        counts = rng.multinomial(draws, p)
        write(name, {i: int(c) for i, c in enumerate(counts) if c > 0})


if "zipf" in groups:
    zipf_pair(12, 1000000, ("zipf_p.txt", "zipf_q.txt"))
if "zbig" in groups:
    zipf_pair(13, 100000000, ("zbig_p.txt", "zbig_q.txt"))


def fnv1a(word):
    h = 0x811C9DC5
    for b in word.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


WORD = re.compile(r"[a-z]+")


def words_of(files):
    counts = collections.Counter()
    for path in files:
        try:
            with gzip.open(path, "rt", errors="replace") as f:
                text = f.read().lower()
        except OSError:
            continue
        counts.update(fnv1a(w) for w in WORD.findall(text) if len(w) > 1)
    return counts


if "man" in groups:
    man1 = sorted(glob.glob("/usr/share/man/man1/*.gz"))
    write("man1.txt", words_of(man1))
    write("man1a.txt", words_of(man1[0::2]))
    write("man1b.txt", words_of(man1[1::2]))
    write("man8.txt", words_of(sorted(glob.glob("/usr/share/man/man8/*.gz"))))
    write("man3.txt", words_of(sorted(glob.glob("/usr/share/man/man3/*.gz"))))
