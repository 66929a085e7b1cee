"""A JSON object as Python holds it: the type of a document at the edge that writes or reads it.

Inside the engine values are typed records (dataclasses, enums); a ``JsonObject`` is what a record's ``to_json``
writes for a documented format (``simulate --format json``, ``check --format json``, a sweep's runs) and what such
a document, an AWS response or a request body is before it is read into a record. Its values are ``Any`` on
purpose: numbers, text, lists and nested objects, whichever the format documents (docs/), not this annotation.
"""

from __future__ import annotations

from typing import Any

#: One JSON object: keys are text, values whatever the document's format holds.
JsonObject = dict[str, Any]
