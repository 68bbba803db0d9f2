"""Issue 39 item 1, privacy review F6 (Python): fedstat.TaskPolicy.check must answer what a
device with that policy does for a task. It took (trust, epsilon, delta) and weighed the epsilon
it was given: the declared epsilon of a dist task (devices are charged what their noise gives,
which may be far more when they assume few honest shares), and a trust "none" task "charged" 20
although devices are charged nothing. It now takes the task as fedstat-server is given it (its
declaration), plans it with the server's own code and runs the device's own checks and charge
(sdk/client/contribution.h device_spend, sdk/client/task_policy.h)."""
import json
import math

import pytest

import fedstat

SEED = "6ed2a5b1f0c3d4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3"


@pytest.fixture()
def base_dir(tmp_path):
    # An item-count file ('<item> <count>' lines) for the kl and data-shift references.
    (tmp_path / "reference.txt").write_text(
        "".join(f"{i} {1 + (i * 7) % 13}\n" for i in range(400)))
    return tmp_path


def declaration(kind, trust, epsilon, delta, clients=(20, 30), **block):
    d = {"id": 7, "kind": kind, "trust": trust, "epsilon": epsilon, "delta": delta,
         "min_clients": clients[0], "max_clients": clients[1], "deadline_seconds": 3600,
         "seed": SEED}
    d[kind] = block
    return d


def none_shift():
    return declaration("data_shift", "none", 0, 0, rows=3, width=64, heap_capacity=16, k=64,
                       domain=400, local_epsilon=0, reference="reference.txt")


def dist_kl(epsilon=1.0):
    # 200 to 300 devices: threshold 151, so each device's share is a 151st of the noise.
    return declaration("kl", "dist", epsilon, 1e-6, clients=(200, 300),
                       reference="reference.txt", rounds=50, **{"lambda": 0.1})


def test_a_none_task_is_charged_nothing(base_dir):
    everything = fedstat.TaskPolicy(accept="all")
    # Devices charge a trust-none task nothing: accepted whatever max_epsilon is.
    assert everything.check(none_shift(), base_dir=base_dir) is None
    assert everything.charges(none_shift(), base_dir=base_dir) == [(0.0, 0.0)]
    assert fedstat.TaskPolicy(accept="all", max_epsilon=0.01, min_exact_epsilon=0).check(
        none_shift(), base_dir=base_dir) is None
    assert fedstat.TaskPolicy().check(none_shift(), base_dir=base_dir) == "trust_model"
    # A JSON string is taken as well as a dict.
    assert everything.check(json.dumps(none_shift()), base_dir=base_dir) is None


def test_a_dist_task_is_weighed_at_what_the_device_charges(base_dir):
    task = dist_kl(1.0)
    [(epsilon, delta)] = fedstat.TaskPolicy().charges(task, base_dir=base_dir)
    # The server calibrates lambda for threshold shares: the device's charge is about the
    # declared epsilon (never below it), at the task's delta.
    assert 1.0 <= epsilon < 1.05
    assert delta == 1e-6
    assert fedstat.TaskPolicy().check(task, base_dir=base_dir) is None
    # An app that assumes only its own share honest is charged that share's epsilon: past the
    # ceiling, declined — though the declared epsilon (1) is well inside it.
    own = fedstat.TaskPolicy(assumed_honest_shares=1)
    assert own.assumed_honest_shares == 1
    [(own_epsilon, _)] = own.charges(task, base_dir=base_dir)
    assert own_epsilon > 10
    assert own.check(task, base_dir=base_dir) == "epsilon_above_max"
    # More shares than the threshold count as the threshold.
    assert fedstat.TaskPolicy(assumed_honest_shares=1000).charges(task, base_dir=base_dir) == [
        (epsilon, delta)]


def test_both_heterogeneity_stages_and_local_noise(base_dir):
    het = declaration("heterogeneity", "dist", 8.0, 1e-5, dimension=3, p=2, max_weight=8,
                      stage2_id=8)
    charges = fedstat.TaskPolicy().charges(het, base_dir=base_dir)
    assert len(charges) == 2  # each stage's RDP curve, converted at the task's delta
    assert all(0 < e < 8 and d == 1e-5 for e, d in charges)
    shift = declaration("data_shift", "trusted", 2.0, 1e-6, rows=3, width=64, heap_capacity=16,
                        k=64, domain=400, local_epsilon=2.0, reference="reference.txt")
    assert fedstat.TaskPolicy().charges(shift, base_dir=base_dir) == [(2.0, 1e-6)]
    assert fedstat.TaskPolicy(max_epsilon=1.5).check(shift, base_dir=base_dir) == \
        "epsilon_above_max"


def test_a_task_the_server_refuses_is_a_value_error(base_dir):
    bad = declaration("model_update", "trusted", 1.0, 1e-6, dimension=4)
    with pytest.raises(ValueError, match="trust"):
        fedstat.TaskPolicy().check(bad, base_dir=base_dir)
    with pytest.raises(ValueError, match="assumed_honest_shares"):
        fedstat.TaskPolicy(assumed_honest_shares=-1)
    assert math.isfinite(fedstat.TaskPolicy().max_epsilon)
