"""fedstat.TaskPolicy: the device's task policy (sdk/client/task_policy.h) with the SDK's defaults
— trust "none" off — its rules in their order on task declarations as fedstat-server takes them
(planned by the server's own planner, weighed at what a device is charged), and refusals of a
malformed policy or declaration. tests/audit/device/test_python_policy_check.py has the charges."""
import math

import pytest

import fedstat

SEED = "1f2e3d4c5b6a79881726354453627180f9e8d7c6b5a4938271605f4e3d2c1b0a"


@pytest.fixture()
def base_dir(tmp_path):
    (tmp_path / "reference.txt").write_text("".join(f"{i} {1 + i % 5}\n" for i in range(300)))
    return tmp_path


def kl(trust, epsilon, delta=1e-6):
    return {"id": 2, "kind": "kl", "trust": trust, "epsilon": epsilon, "delta": delta,
            "min_clients": 20, "max_clients": 30, "deadline_seconds": 3600, "seed": SEED,
            "kl": {"reference": "reference.txt", "rounds": 40, "lambda": 0.1}}


def test_the_defaults_are_the_sdks():
    p = fedstat.TaskPolicy()
    assert p.accept == ("trusted", "tagg", "dist")
    assert (p.max_epsilon, p.max_delta, p.min_exact_epsilon) == (10.0, 1e-5, 0.1)
    assert p.assumed_honest_shares == 0
    assert p.answer == ("data_shift", "kl", "model_update", "heterogeneity")
    assert repr(p) == ("TaskPolicy(accept=('trusted', 'tagg', 'dist'), max_epsilon=10.0, "
                       "max_delta=1e-05, min_exact_epsilon=0.1, assumed_honest_shares=0, "
                       "answer=('data_shift', 'kl', 'model_update', 'heterogeneity'), "
                       "min_assumed_dropout_ppm=50000, min_assumed_corrupt_ppm=50000)")


def test_a_kind_the_device_does_not_answer_is_declined_first(base_dir):
    # Second review of issue 39, B1: the kinds a device answers are configuration, checked
    # before anything else of the policy (here a trust model it would refuse too).
    p = fedstat.TaskPolicy(answer=("data_shift", "model_update"))
    assert p.answer == ("data_shift", "model_update")
    assert p.check(kl("trusted", 1), base_dir=base_dir) == "task_kind"
    assert p.check(kl("none", 0, 0), base_dir=base_dir) == "task_kind"
    assert fedstat.TaskPolicy(answer="kl").check(kl("trusted", 1), base_dir=base_dir) is None
    assert fedstat.TaskPolicy(answer="all").answer == fedstat.TaskPolicy().answer


def test_a_default_policy_declines_what_the_issue_names(base_dir):
    p = fedstat.TaskPolicy()
    check = lambda task: p.check(task, base_dir=base_dir)  # noqa: E731
    assert check(kl("none", 0, 0)) == "trust_model"  # exact words, nothing charged
    assert check(kl("trusted", 0.01)) == "exact_epsilon_below_min"
    assert check(kl("tagg", 0.01)) == "exact_epsilon_below_min"
    assert check(kl("trusted", 12)) == "epsilon_above_max"
    assert check(kl("trusted", 1, 1e-3)) == "delta_above_max"
    # Inside it: answered (None), the bounds included.
    assert check(kl("trusted", 0.1, 1e-5)) is None
    assert check(kl("trusted", 10, 1e-5)) is None
    # A dist task is weighed at what its noise gives, not exempt from the ceiling...
    assert check(kl("dist", 12)) == "epsilon_above_max"
    # ... but from the floor (its charge is the device's own noise).
    assert check(kl("dist", 0.05)) is None
    # The first rule that fails is the one named.
    assert check(kl("trusted", 50, 0.5)) == "epsilon_above_max"


def test_opting_in_to_none(base_dir):
    for accept in (("none",), "none", "trusted,none", ("all",), "all"):
        p = fedstat.TaskPolicy(accept=accept)
        assert "none" in p.accept
        assert p.check(kl("none", 0, 0), base_dir=base_dir) is None
    only_none = fedstat.TaskPolicy(accept="none")
    assert only_none.accept == ("none",)
    assert only_none.check(kl("dist", 1), base_dir=base_dir) == "trust_model"
    assert fedstat.TaskPolicy(accept="all").accept == ("trusted", "tagg", "dist", "none")


@pytest.mark.parametrize("kwargs, field", [
    ({"accept": ()}, "accept"),
    ({"accept": "bogus"}, "accept"),
    ({"accept": "none,"}, "accept"),
    ({"max_epsilon": float("nan")}, "max_epsilon"),
    ({"max_epsilon": math.inf}, "max_epsilon"),
    ({"max_epsilon": -1.0}, "max_epsilon"),
    ({"max_epsilon": 0.0}, "max_epsilon"),
    ({"max_delta": float("nan")}, "max_delta"),
    ({"max_delta": 1.0}, "max_delta"),
    ({"max_delta": -1e-9}, "max_delta"),
    ({"min_exact_epsilon": math.inf}, "min_exact_epsilon"),
    ({"min_exact_epsilon": -0.5}, "min_exact_epsilon"),
    ({"max_epsilon": 1.0, "min_exact_epsilon": 2.0}, "min_exact_epsilon"),
    ({"assumed_honest_shares": -1}, "assumed_honest_shares"),
    ({"assumed_honest_shares": 2**32}, "assumed_honest_shares"),
    ({"answer": ()}, "answer"),
    ({"answer": "kl,models"}, "answer"),
    ({"min_assumed_dropout_ppm": 1000000}, "min_assumed_dropout_ppm"),
    ({"min_assumed_corrupt_ppm": -1}, "min_assumed_corrupt_ppm"),
])
def test_a_malformed_policy_is_refused_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        fedstat.TaskPolicy(**kwargs)


def test_refusals_of_the_arguments(base_dir):
    with pytest.raises(TypeError):
        fedstat.TaskPolicy(accept=("none", 3))
    with pytest.raises(TypeError):
        fedstat.TaskPolicy(10.0)  # keyword-only
    with pytest.raises(TypeError):
        fedstat.TaskPolicy().check(3)  # a declaration is a dict or JSON text
    with pytest.raises(ValueError, match="JSON"):
        fedstat.TaskPolicy().check("{not json")
    with pytest.raises(ValueError, match="trust"):
        fedstat.TaskPolicy().check(kl("central", 1), base_dir=base_dir)
    with pytest.raises(ValueError, match="epsilon"):
        fedstat.TaskPolicy().check(dict(kl("trusted", 1), epsilon="one"), base_dir=base_dir)
