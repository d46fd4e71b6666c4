"""Subclasses of the JSON types whose overridden methods say something other than what they
hold: the backends must read what is stored, as orjson and the binding do."""

from __future__ import annotations

import enum


class Kind(str, enum.Enum):
    CHUNK = "agent_message_chunk"


class Side(str, enum.Enum):
    AGENT = "agent"


class LoudStr(str):
    def __str__(self) -> str:
        return "overridden"

    def __hash__(self) -> int:
        return 0


class LoudInt(int):
    def __int__(self) -> int:
        return 99

    def __index__(self) -> int:
        return 99


class LoudFloat(float):
    def __float__(self) -> float:
        return 9.5


class LoudDict(dict):
    def items(self):
        return [("overridden", 1)]

    def __iter__(self):
        return iter(["overridden"])


class LoudList(list):
    def __iter__(self):
        return iter(["overridden"])


class LoudTuple(tuple):
    def __iter__(self):
        return iter(["overridden"])
