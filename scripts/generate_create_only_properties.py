"""Regenerate ``policy_engine/data/create_only_properties.json`` from the CloudFormation schemas cfn-lint ships.

    python scripts/generate_create_only_properties.py          # rewrite the file
    python scripts/generate_create_only_properties.py --check  # exit 1 when the file is out of date

Which properties force CloudFormation to delete and recreate a resource (``createOnlyProperties``)
is AWS's data, not ours: the package keeps a copy so that ``batch-quota diff`` needs no cfn-lint
at run time, and a test regenerates it and fails on any difference.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

#: The four resource types a batch-quota topology deploys.
RESOURCE_TYPES = (
    "AWS::Batch::ServiceEnvironment",
    "AWS::Batch::SchedulingPolicy",
    "AWS::Batch::JobQueue",
    "AWS::Batch::QuotaShare",
)
#: The region whose schemas are read (the resource types are the same in every region that has them).
REGION = "us-east-1"
OUTPUT = Path(__file__).resolve().parent.parent / "policy_engine" / "data" / "create_only_properties.json"


def generate() -> dict:
    """``{resource type: [top-level property, ...]}`` from cfn-lint's provider schemas."""
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    resources = {}
    for resource_type in RESOURCE_TYPES:
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema(REGION, resource_type).schema
        pointers = schema.get("createOnlyProperties", [])
        resources[resource_type] = sorted(pointer.removeprefix("/properties/") for pointer in pointers)
    return {"source": f"cfn-lint provider schemas ({REGION}), createOnlyProperties", "resources": resources}


def render(data: dict) -> str:
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    text = render(generate())
    if "--check" in argv:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT.name} is out of date: run python scripts/generate_create_only_properties.py",
                  file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
