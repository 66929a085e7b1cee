"""``explain``'s advice sentences: each knob the wait advice considers, with what a replay of the scenario with that
one change did to the share's wait (``sweep.advice``). A knob is called helpful or not only from its replay; without
a scenario nothing is replayed, and the sentence says the advice is untested."""

from __future__ import annotations

from typing import Any

from policy_engine.foundation.units import duration_text
from policy_engine.sweep.advice import Advice, HelpsRule

Sentence = tuple[str, str]
TOPIC = "advice"
#: Ends of run closer than this read as the same end.
_SAME_END = 1.0


#: How a judged figure reads in a sentence (``sweep.advice.JUDGED_FIGURES``).
FIGURE_WORDS = {"wait_p50": "wait p50", "wait_p95": "wait p95", "wait_max": "longest wait"}

def _change(item: Advice) -> str:
    if item.knob == "borrow_limit":
        return f"raising borrow_limit {item.was} -> {item.value}"
    if item.knob == "strategy":
        return f"strategy {item.was} -> {item.value}"
    if item.knob == "transfer":
        giver = item.vary.split("(", 1)[1].split(",", 1)[0]
        return (f"moving {item.value} {item.instance_type} of limit from {giver} to {item.share} (its limit "
                f"{item.was} -> {item.was + item.value})")
    if item.knob == "environment_capacity":
        return f"growing the environment's {item.instance_type} {item.was} -> {item.value}"
    if item.knob == "limit":
        return f"raising the limit of {item.instance_type} {item.was} -> {item.value}"
    if item.knob == "in_share_preemption":
        return "turning in_share_preemption off"
    return f"{item.knob} {item.was} -> {item.value}"


def _end(item: Advice) -> str:
    moved = item.end_after - item.end_before
    if abs(moved) < _SAME_END:
        return ""
    return f"; the run ended {duration_text(abs(moved))} {'sooner' if moved < 0 else 'later'}"


def advice_sentence(item: Advice, rule: HelpsRule) -> str:
    """One knob, its replay's figures and the verdict the replay gives under ``rule``."""
    figures = (f"{item.instance_type} {FIGURE_WORDS.get(item.figure, item.figure)} {duration_text(item.before)} -> "
               f"{duration_text(item.after)}")
    if item.helps:
        said = f"{_change(item)} cut {item.share}'s {figures} in a replay of this scenario"
    elif item.harms:
        said = f"{_change(item)} made it worse: {item.share}'s {figures} in a replay of this scenario"
    else:
        said = (f"{_change(item)} did not help: {item.share}'s {figures} in a replay of this scenario (helping is a "
                f"cut of more than {rule.fraction:.0%} and {duration_text(rule.seconds)})")
    said += _end(item) + f" (--vary '{item.vary}'; tried because {item.why})"
    if item.check_errors:
        said += f"; that topology fails check ({', '.join(item.check_errors)}), so AWS would refuse it as written"
    return said + "."


def advice_sentences(advice: tuple[Advice, ...] | None, rule: HelpsRule | None, share: str) -> list[Sentence]:
    """The replayed knobs' sentences; without a scenario, one saying that no knob is judged."""
    if advice is None or rule is None:
        return [(TOPIC, f"Untested: without --scenario nothing is replayed, so no knob is judged here; "
                        f"explain {share} --scenario S tries each knob in a replay of S and states its effect.")]
    if not advice:
        return [(TOPIC, f"No knob was replayed: no job of {share} waited at its limit, for lendable capacity, for a "
                        "full environment, after an in-share preemption or with a job larger than its limit.")]
    return [(TOPIC, advice_sentence(item, rule)) for item in advice]


def advice_figures(advice: tuple[Advice, ...] | None) -> list[dict[str, Any]]:
    """The same as numbers (``explain --format json``): ``[]`` when untested (``advice_tested`` says which)."""
    return [item.to_json() for item in advice or ()]
