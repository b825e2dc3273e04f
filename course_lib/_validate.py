"""Input validation shared by every course_lib module.

Each helper raises ``ValueError`` with a message that names the parameter and the
allowed range, e.g. ``n_gpus must be a finite number > 0 (got -3)``. The course's
rule: a learner who passes a wrong value learns *which* value and *what* is allowed.
"""
from __future__ import annotations

import math
import numbers

__all__ = [
    "check_finite",
    "check_positive",
    "check_non_negative",
    "check_open_unit",
    "check_int_at_least",
    "check_int_positive",
    "check_int_non_negative",
    "check_choice",
]


def _as_float(name: str, value, allowed: str) -> float:
    if type(value) is float:  # the common case, fast (a float is a Real and not a bool)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number {allowed} (got {value!r})")
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number {allowed} (got {value!r})")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number {allowed} (got {value!r})")
    return x


def check_finite(name: str, value) -> float:
    """Return ``value`` as float; reject non-numbers, NaN and infinities."""
    return _as_float(name, value, "(any finite real)")


def check_positive(name: str, value) -> float:
    """Return ``value`` as float; it must be finite and > 0."""
    x = _as_float(name, value, "> 0")
    if x <= 0:
        raise ValueError(f"{name} must be a finite number > 0 (got {value!r})")
    return x


def check_non_negative(name: str, value) -> float:
    """Return ``value`` as float; it must be finite and >= 0."""
    x = _as_float(name, value, ">= 0")
    if x < 0:
        raise ValueError(f"{name} must be a finite number >= 0 (got {value!r})")
    return x


def check_unit_interval(name: str, value) -> float:
    """Return ``value`` as float; it must lie in the closed interval [0, 1] (a share)."""
    x = _as_float(name, value, "in [0, 1]")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must be a finite number in [0, 1] (got {value!r})")
    return x


def check_open_unit(name: str, value) -> float:
    """Return ``value`` as float; it must lie strictly between 0 and 1."""
    x = _as_float(name, value, "in the open interval (0, 1)")
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must be a finite number in the open interval (0, 1) (got {value!r})")
    return x


def _as_int(name: str, value, allowed: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer {allowed} (got {value!r})")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        return int(value)
    raise ValueError(f"{name} must be an integer {allowed} (got {value!r})")


def check_int_at_least(name: str, value, lo: int, why: str = "") -> int:
    """Return ``value`` as int; it must be a whole number >= ``lo`` (``why``, if given, says why in the message)."""
    allowed = f">= {lo}" + (f" ({why})" if why else "")
    n = _as_int(name, value, allowed)
    if n < lo:
        raise ValueError(f"{name} must be an integer {allowed} (got {value!r})")
    return n


def check_int_positive(name: str, value) -> int:
    """Return ``value`` as int; it must be a whole number >= 1."""
    return check_int_at_least(name, value, 1)


def check_int_non_negative(name: str, value) -> int:
    """Return ``value`` as int; it must be a whole number >= 0."""
    return check_int_at_least(name, value, 0)


def check_choice(name: str, value, choices) -> str:
    """Return ``value`` if it is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)} (got {value!r})")
    return value


# ---------------------------------------------------------------- declared per field
def checked(check, optional: bool = False, **kw):
    """A dataclass field validated by ``check(name, value)`` (its return value is stored).

    ``None`` is accepted and kept when the field's default is ``None`` or ``optional`` is set
    ("computed from the other fields"); every other value goes through ``check``.
    """
    from dataclasses import field

    metadata = dict(kw.pop("metadata", {}) or {})
    metadata["check"] = check
    metadata["optional"] = optional
    return field(metadata=metadata, **kw)


def _field_checks(cls) -> tuple:
    """``((name, check, none_ok), ...)`` for ``cls``'s checked fields, computed once per class."""
    cached = cls.__dict__.get("_checked_fields")
    if cached is None:
        from dataclasses import fields

        cached = tuple((f.name, f.metadata["check"], f.default is None or bool(f.metadata.get("optional")))
                       for f in fields(cls) if f.metadata.get("check") is not None)
        cls._checked_fields = cached  # set on this class itself (a subclass computes its own)
    return cached


class Validated:
    """Mixin for frozen dataclasses: runs each field's declared ``check`` in ``__post_init__``.

    Subclasses add cross-field rules in ``_validate_fields`` (called after the per-field checks).
    :meth:`_evolve` is the fast copy for derived records: it checks only the fields it changes.
    """

    def __post_init__(self):
        for name, check, none_ok in _field_checks(type(self)):
            value = getattr(self, name)
            if value is None and none_ok:  # None: "computed from the others"
                continue
            object.__setattr__(self, name, check(name, value))
        self._validate_fields()

    def _evolve(self, **changes):
        """A copy with ``changes``: the same record ``dataclasses.replace`` gives, checking only what changed.

        The other fields were checked when ``self`` was built (every check returns the value it stores
        unchanged when given it again), so only the changed fields go through their ``check``; the
        cross-field rules (``_validate_fields``) run on the copy as always. Bad input is rejected with the
        same ``ValueError``. For subclasses whose ``__post_init__`` only validates (not one that derives
        fields, such as :class:`course_lib.scenario.Scenario`).
        """
        from dataclasses import fields

        cls = type(self)
        names = cls.__dict__.get("_field_names")
        if names is None:
            names = frozenset(f.name for f in fields(cls) if f.init)
            cls._field_names = names
        unknown = set(changes) - names
        if unknown:  # what dataclasses.replace says
            raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        out = object.__new__(cls)
        for name in names:
            object.__setattr__(out, name, changes[name] if name in changes else getattr(self, name))
        for name, check, none_ok in _field_checks(cls):
            if name in changes:
                value = changes[name]
                if not (value is None and none_ok):
                    object.__setattr__(out, name, check(name, value))
        out._validate_fields()
        return out

    def _validate_fields(self) -> None:  # pragma: no cover - default: nothing across fields
        pass
