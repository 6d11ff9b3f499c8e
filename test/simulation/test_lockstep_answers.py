"""Lockstep on stamped answers (:mod:`rnea_ros.simulation.lockstep`, issue 35 §11): only
the answer to the state still waiting steps the plant; anything else is counted."""

from __future__ import annotations

import numpy as np
import pytest

from rnea_ros.core.errors import JointNameError, StateError
from rnea_ros.simulation.lockstep import LockstepAnswers

NAMES = ("a", "b", "c")


def test_only_the_answer_to_the_waiting_state_is_taken_and_only_once() -> None:
    answers = LockstepAnswers(NAMES)
    assert answers.take(0, NAMES, [1.0, 2.0, 3.0]) is None  # nothing published yet
    answers.published(1_000_000)
    assert answers.take(0, NAMES, [1.0, 2.0, 3.0]) is None  # an earlier state's
    np.testing.assert_array_equal(answers.take(1_000_000, NAMES, [1.0, 2.0, 3.0]),
                                  [1.0, 2.0, 3.0])
    assert answers.take(1_000_000, NAMES, [9.0, 9.0, 9.0]) is None  # a second answer
    assert answers.ignored == 3
    answers.published(1_000_000)  # the same state resent: waiting again
    assert answers.take(1_000_000, NAMES, [4.0, 5.0, 6.0]) is not None
    answers.published(2_000_000)
    assert answers.take(2_000_001, NAMES, [1.0, 2.0, 3.0]) is None  # 1 ns off: another
    assert answers.ignored == 4


def test_an_answer_in_another_joint_order_is_put_in_command_order() -> None:
    answers = LockstepAnswers(NAMES)
    answers.published(5)
    np.testing.assert_array_equal(answers.take(5, ("c", "a", "b"), [3.0, 1.0, 2.0]),
                                  [1.0, 2.0, 3.0])


@pytest.mark.parametrize(("names", "efforts", "error", "words"), [
    (("a", "b", "x"), [1.0, 2.0, 3.0], JointNameError, "unknown 'x'; missing 'c'"),
    (("a", "b"), [1.0, 2.0], JointNameError, "missing 'c'"),
    (("a", "a", "b"), [1.0, 2.0, 3.0], JointNameError, "missing 'c'"),
    (("a", "b", "c", "a"), [1.0, 2.0, 3.0, 4.0], JointNameError, "named twice"),
    (NAMES, [1.0, np.nan, 3.0], StateError, "non-finite effort for joints 'b'"),
    (("x",), [np.nan], JointNameError, "unknown 'x'; missing 'a', 'b', 'c'"),
    (NAMES, [1.0, 2.0], StateError, "2 efforts for 3 joints"),
])
def test_a_bad_answer_is_refused_by_name_and_the_state_still_waits(
        names: tuple[str, ...], efforts: list[float], error: type[Exception],
        words: str) -> None:
    answers = LockstepAnswers(NAMES)
    answers.published(7)
    with pytest.raises(error) as raised:
        answers.take(7, names, efforts)
    assert words in str(raised.value)
    assert "valid" in str(raised.value) or error is StateError
    assert answers.take(7, NAMES, [1.0, 2.0, 3.0]) is not None  # still waiting


def test_an_answer_stamped_after_the_newest_state_is_from_another_clock() -> None:
    """A controller without ``use_sim_time`` stamps its answers on the wall clock: after
    every simulated state, so nothing it sends can step the plant (counted apart)."""
    answers = LockstepAnswers(NAMES)
    assert answers.take(1, NAMES, [1.0, 2.0, 3.0]) is None and answers.foreign == 1
    answers.published(1_000_000)
    assert answers.take(1_795_983_226_000_000_000, NAMES, [1.0, 2.0, 3.0]) is None
    assert answers.take(999_999, NAMES, [1.0, 2.0, 3.0]) is None  # earlier: a watchdog's
    assert (answers.ignored, answers.foreign) == (3, 2)
