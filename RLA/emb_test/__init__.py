"""The original's embedded checks (``RLA.emb_test``): run a check function once, every N calls,
or once per key, from inside training code.

``ut_controller.add_test('shapes', fn, TestType.KEY_MAP, keys=['a', 'b'])`` then
``ut_controller.do_test('shapes', key='a', *args)`` runs ``fn(*args)`` the first time each key
is seen. Fixed: the original's ``KEY_MAP`` logic was inverted and never ran a check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from RLA.easy_log import logger
from RLA.errors import RLAError


class TestType:
    """When a check runs: the first call, every ``freq`` calls, or the first call per key."""

    SINGLE_TIME = "single_time"
    FREQUENT = "freq"
    KEY_MAP = "hash"


class BasicUnitTest:
    """Base of the controller (kept for code that subclasses it)."""


class EmbUnitTestObj:
    """One registered check and its schedule."""

    def __init__(
        self, test_func: Callable[..., Any], test_type: str, freq: int = -1, keys: Iterable[Any] | None = None
    ) -> None:
        self.test_type, self.name, self.test_func = (
            test_type,
            getattr(test_func, "__name__", "check"),
            test_func,
        )
        self.calls = 0
        if test_type == TestType.FREQUENT and (not isinstance(freq, int) or freq <= 0):
            raise RLAError(
                "A FREQUENT check needs a period",
                expected="freq = a positive int",
                found=repr(freq),
                fix="add_test(name, fn, TestType.FREQUENT, freq=10)",
            )
        if test_type == TestType.KEY_MAP and keys is None:
            raise RLAError(
                "A KEY_MAP check needs its keys",
                expected="keys=[...]",
                found="None",
                fix="add_test(name, fn, TestType.KEY_MAP, keys=['a', 'b'])",
            )
        if test_type not in (TestType.SINGLE_TIME, TestType.FREQUENT, TestType.KEY_MAP):
            raise RLAError(
                f"Unknown test type {test_type!r}",
                expected="a TestType constant",
                found=repr(test_type),
                fix="use TestType.SINGLE_TIME, FREQUENT or KEY_MAP",
            )
        self.freq = freq
        self.pending = set(keys or ())

    def should_run(self, key: Any = None) -> bool:
        """Whether this call runs the check (and note that it did)."""
        self.calls += 1
        if self.test_type == TestType.SINGLE_TIME:
            return self.calls == 1
        if self.test_type == TestType.FREQUENT:
            return self.calls % self.freq == 0
        if key in self.pending:
            self.pending.discard(key)
            return True
        return False

    def __call__(self, key: Any = None, func_name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        if self.should_run(key):
            logger.info(f"do test {self.test_type}, {self.name} - {func_name}")
            return self.test_func(*args, **kwargs)
        return None


class EmbUnitController(BasicUnitTest):
    """The registry of checks (``ut_controller`` is the default one)."""

    def __init__(self) -> None:
        self.test_obj_dict: dict[str, EmbUnitTestObj] = {}
        self.test_type = TestType

    def add_test(
        self,
        test_func_name: str,
        test_func: Callable[..., Any],
        test_type: str,
        freq: int = -1,
        keys: Iterable[Any] | None = None,
    ) -> None:
        """Register a check (a name registered twice keeps the first, as in the original)."""
        if test_func_name not in self.test_obj_dict:
            self.test_obj_dict[test_func_name] = EmbUnitTestObj(test_func, test_type, freq, keys)

    def do_test(self, func_name: str, key: Any = None, *args: Any, **kwargs: Any) -> Any:
        """Run the check ``func_name`` if its schedule says so; returns its result or None."""
        if func_name not in self.test_obj_dict:
            raise RLAError(
                f"No embedded test named {func_name!r}",
                expected="a name given to add_test",
                found=", ".join(sorted(self.test_obj_dict)) or "none registered",
                fix="call ut_controller.add_test(name, fn, type) first",
            )
        return self.test_obj_dict[func_name](key, func_name, *args, **kwargs)


ut_controller = EmbUnitController()

__all__ = ["BasicUnitTest", "EmbUnitController", "EmbUnitTestObj", "TestType", "ut_controller"]
