"""A fitted (or planned) profile as YAML a person can edit, with what the fit found as comments."""

from __future__ import annotations

from typing import Any

from policy_engine.inputs import safe_yaml
from policy_engine.simulation.profiles.spec import WorkloadProfile


def profile_data(profile: WorkloadProfile) -> dict[str, Any]:
    """Plain data that loads back as ``profile`` (defaults and unset fields left out)."""
    data: dict[str, Any] = profile.model_dump(mode="python", exclude_none=True, exclude_defaults=False)
    for share in data["shares"].values():
        for key in ("daily_cycle", "weekly_cycle"):
            if key in share:
                share[key] = list(share[key])
        for use in share.get("training_plans", {}).values():  # the timing enum's members as the file spells them
            use["timing"] = {str(timing.value): weight for timing, weight in use["timing"].items()}
    return data


def profile_yaml(profile: WorkloadProfile, header: list[str]) -> str:
    """The profile as YAML, ``header`` lines first as comments."""
    comments = "".join(f"# {line}\n" for line in header)
    return comments + safe_yaml.dump(profile_data(profile), default_flow_style=None, width=110)
