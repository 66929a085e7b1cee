"""What a schema error says: pydantic's validation errors as one line in the words of the file's author.

``unknown key 'borow_limit' (did you mean 'borrow_limit'?)``, ``missing required key``, ``input should be
a valid integer, got 'ten'``: values are shown as YAML/JSON spell them, and a typo is not also reported
as the missing key it was meant to be. A validator's own message reads as it was written, without the words
pydantic puts before it (``Value error, ``, ``Assertion failed, ``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from policy_engine.foundation import model

#: Model classes by name, to suggest field names in errors raised while building them in Python.
MODELS: dict[str, type[BaseModel]] = {
    name: value for name, value in vars(model).items() if isinstance(value, type) and issubclass(value, BaseModel)
}


def describe(error: Mapping[str, Any], model_fields: Iterable[str]) -> str:
    """One pydantic error as the file's author would say it; ``model_fields`` are the names a typo may mean."""
    kind, value = error["type"], error.get("input")
    if kind == "extra_forbidden":
        key = error["loc"][-1]
        close = difflib.get_close_matches(str(key), list(model_fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {key!r}{hint}"
    if kind == "missing":
        return "missing required key"
    message = validator_message(error) or error["msg"].replace("valid tuple", "valid list")
    if kind not in WRAPPED:  # pydantic's own sentence starts with a capital; a validator's is as written
        message = f"{message[0].lower()}{message[1:]}"
    if value is None:
        hint = " (write [] or {}, or remove the key)" if kind in ("tuple_type", "list_type", "dict_type") else ""
        return f"{message}, got an empty value{hint}"
    return f"{message}, got {shown(value)}"


#: Error types whose ``msg`` is pydantic's prefix (``Value error, ``, ``Assertion failed, ``) before the message
#: of the exception a validator raised, which ``ctx["error"]`` holds.
WRAPPED = ("value_error", "assertion_error")


def validator_message(error: Mapping[str, Any]) -> str | None:
    """The message a validator raised (``ValueError``, ``AssertionError``), read from the error's context rather
    than cut out of pydantic's sentence; ``None`` for pydantic's own errors. A bare ``assert`` has no words of its
    own: it reads as a failed check."""
    if error["type"] not in WRAPPED:
        return None
    raised = (error.get("ctx") or {}).get("error")
    text = str(raised) if raised is not None else ""
    return text or "the value fails a check of the schema"


def shown(value: Any) -> str:
    """A value as the user wrote it in YAML/JSON: ``true``, ``null``, ``'text'``, ``3``, or its kind."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return repr(value)


def fields_at(root: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """Field names of the model (under ``root``) that owns the last key of ``loc`` (for "did you mean")."""
    current: Any = root
    for part in loc[:-1]:
        if isinstance(part, int) or not (isinstance(current, type) and issubclass(current, BaseModel)):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return []
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        current = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), annotation)
    return list(current.model_fields) if isinstance(current, type) and issubclass(current, BaseModel) else []
