"""fedstat.TaskPolicy: the device's task policy (sdk/client/task_policy.h) with the SDK's defaults
— trust "none" off — its rules in their order, and refusals of a malformed policy."""
import math

import pytest

import fedstat


def test_the_defaults_are_the_sdks():
    p = fedstat.TaskPolicy()
    assert p.accept == ("trusted", "tagg", "dist")
    assert (p.max_epsilon, p.max_delta, p.min_exact_epsilon) == (10.0, 1e-5, 0.1)
    assert repr(p) == ("TaskPolicy(accept=('trusted', 'tagg', 'dist'), max_epsilon=10.0, "
                       "max_delta=1e-05, min_exact_epsilon=0.1)")


def test_a_default_policy_declines_what_the_issue_names():
    p = fedstat.TaskPolicy()
    assert p.check("none", 0, 0) == "trust_model"               # exact words, nothing charged
    assert p.check("trusted", 1e-9, 1e-6) == "exact_epsilon_below_min"
    assert p.check("tagg", 1e-9, 1e-6) == "exact_epsilon_below_min"
    assert p.check("trusted", 12, 1e-6) == "epsilon_above_max"
    assert p.check("trusted", 1, 1e-3) == "delta_above_max"
    # Inside it: answered (None), the bounds included.
    assert p.check("trusted", 0.1, 1e-5) is None
    assert p.check("dist", 10, 1e-5) is None
    # A DIST task's charge is what the device's own noise gives, so the ε floor does not apply.
    assert p.check("dist", 1e-9, 1e-6) is None
    # A DIST task whose Skellam shares are too small for its declared ε = 1: the charge the device
    # computes (the accountant at threshold shares) is what the ceiling sees.
    charge = fedstat.skellam_epsilon(1e-3, 6, 2, math.sqrt(2), 1e-8).epsilon
    assert charge > 10
    assert p.check("dist", charge, 1e-8) == "epsilon_above_max"
    # The first rule that fails is the one named.
    assert p.check("none", 100, 0.5) == "trust_model"
    assert p.check("trusted", 100, 0.5) == "epsilon_above_max"
    assert p.check("trusted", float("nan"), 0) == "epsilon_above_max"


def test_opting_in_to_none():
    for accept in (("none",), "none", "trusted,none", ("all",), "all"):
        p = fedstat.TaskPolicy(accept=accept)
        assert "none" in p.accept
        assert p.check("none", 0, 0) is None
    only_none = fedstat.TaskPolicy(accept="none")
    assert only_none.accept == ("none",)
    assert only_none.check("dist", 1, 1e-6) == "trust_model"
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
])
def test_a_malformed_policy_is_refused_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        fedstat.TaskPolicy(**kwargs)


def test_refusals_of_the_arguments():
    with pytest.raises(TypeError):
        fedstat.TaskPolicy(accept=("none", 3))
    with pytest.raises(TypeError):
        fedstat.TaskPolicy(10.0)  # keyword-only
    with pytest.raises(ValueError, match="trust must be"):
        fedstat.TaskPolicy().check("central", 1, 1e-6)
