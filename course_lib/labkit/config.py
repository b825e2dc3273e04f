"""Lab configs as validated records: one declaration per field, as the model's records (notebooks 07, 10, 11).

A lab's config is a frozen dataclass deriving from :class:`LabConfigBase` (the model's
:class:`course_lib._validate.Validated`): each field names its check with ``checked(...)``; rules
across fields go in ``_validate_fields``. The checks here are the ones the labs share; every
message names the field and the allowed range.
"""
from __future__ import annotations

import dataclasses
import json

from .._validate import Validated, check_choice, check_int_at_least

__all__ = ["LabConfigBase", "at_least", "one_of", "records"]


def at_least(lo: int, why: str = ""):
    """A check: an integer >= ``lo`` (``why`` says why, in the message); :func:`course_lib._validate.check_int_at_least`."""

    def check(name, value):
        return check_int_at_least(name, value, lo, why)

    return check


def one_of(choices):
    """A check: one of ``choices``."""
    return lambda name, value: check_choice(name, value, choices)


def records(cls):
    """A check: a sequence of ``cls`` records, each given as a record (of ``cls`` or a base class of
    it), a tuple of its fields in order, or a dict; returned as a tuple of ``cls``. A bad item is named
    by its index (``failures[1].step must be ...``)."""

    def coerce(value):
        if isinstance(value, cls):
            return value
        if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a record of a kindred class
            names = {f.name for f in dataclasses.fields(cls)}
            return cls(**{f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.name in names})
        if isinstance(value, dict):
            return cls(**value)
        if isinstance(value, (tuple, list)):
            return cls(*value)
        raise ValueError(f"must be a {cls.__name__}, a tuple of its fields or a dict (got {value!r})")

    def check(name, value):
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
            raise ValueError(f"{name} must be a sequence of {cls.__name__} (got {value!r})")
        out = []
        for i, item in enumerate(value):
            try:
                out.append(coerce(item))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{name}[{i}].{exc}" if isinstance(exc, ValueError) and not str(exc).startswith("must")
                                 else f"{name}[{i}] {exc}") from None
        return tuple(out)

    return check


@dataclasses.dataclass(frozen=True)
class LabConfigBase(Validated):
    """What every lab config can do: ``replace``, and a JSON round trip (the job reads the JSON)."""

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict:
        """The fields as plain data (records as dicts, tuples as lists once in JSON)."""
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str):
        return cls(**json.loads(text))
