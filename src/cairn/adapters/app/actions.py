"""What a person can do from the app, each one `Cairn` call: the same methods the CLI and MCP
call, so history, events and evidence record it the same way.

`POST /<kind>/<target>/<verb>`: `memories/mem_12/confirm`, `acts/act_3/undo`,
`tidy/tidy_4/accept`, ... The form's `scope` names the scope the page was showing. A purge
needs the ref typed again (`confirm_ref`), since it erases every version for good.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from cairn.core import Cairn
from cairn.errors import InvalidInput, NotFound
from cairn.models import to_jsonable

Form = Mapping[str, list[str]]
MAX_TEXT = 20_000


@dataclass(frozen=True, slots=True)
class Done:
    result: Any  # JSON-ready
    next_url: str


@dataclass(frozen=True, slots=True)
class Action:
    run_call: Callable[[Cairn, str, str | None, Form], tuple[Any, str]]
    did: str

    def run(self, mem: Cairn, target: str, form: Form) -> Done:
        scope = _field(form, "scope", required=False)
        result, where = self.run_call(mem, target, scope, form)
        query = {"did": self.did, **({"scope": scope} if scope else {})}
        return Done(to_jsonable(result), f"{where}?{urlencode(query)}")


def _field(form: Form, name: str, *, required: bool = True) -> str | None:
    values = form.get(name) or []
    if len(values) > 1:
        raise InvalidInput(f"give {name} once, not {len(values)} times.")
    value = values[0] if values else ""
    if len(value) > MAX_TEXT:
        raise InvalidInput(f"{name} is longer than {MAX_TEXT} characters; shorten it.")
    if required and not value.strip():
        raise InvalidInput(f"{name} is blank; fill it in.")
    return value if value.strip() else None


def _text(form: Form, name: str) -> str:
    value = _field(form, name)
    assert value is not None
    return value


def _card(ref: str) -> str:
    return f"/memories/{quote(ref, safe='')}"


def _confirm(mem: Cairn, ref: str, scope: str | None, form: Form) -> tuple[Any, str]:
    person = _field(form, "person", required=False) or ""
    return mem.confirm(ref, scope=scope, person=person), _card(ref)


def _unconfirm(mem: Cairn, ref: str, scope: str | None, form: Form) -> tuple[Any, str]:
    person = _field(form, "person", required=False) or ""
    return mem.unconfirm(ref, person=person, scope=scope), _card(ref)


def _correct(mem: Cairn, ref: str, scope: str | None, form: Form) -> tuple[Any, str]:
    done = mem.correct(ref, _text(form, "content"), reason=_text(form, "reason"), scope=scope)
    return done, _card(done.memory_id)


def _forget(mem: Cairn, ref: str, scope: str | None, form: Form) -> tuple[Any, str]:
    return {"event": mem.forget(ref, reason=_text(form, "reason"), scope=scope)}, _card(ref)


def _pin(mem: Cairn, ref: str, scope: str | None, form: Form) -> tuple[Any, str]:
    return mem.set_pinned(ref, True, scope=scope), _card(ref)


def _unpin(mem: Cairn, ref: str, scope: str | None, form: Form) -> tuple[Any, str]:
    return mem.set_pinned(ref, False, scope=scope), _card(ref)


def _purge(mem: Cairn, ref: str, scope: str | None, form: Form) -> tuple[Any, str]:
    typed = (_field(form, "confirm_ref", required=False) or "").strip()
    if typed != ref:
        raise InvalidInput(f"type {ref} into the box to purge it; purging cannot be undone.")
    return {"tombstone": mem.purge(ref, scope=scope)}, "/memories"


def _undo_act(mem: Cairn, act: str, scope: str | None, form: Form) -> tuple[Any, str]:
    back = _field(form, "back", required=False)
    where = _card(back) if back and back.startswith("mem_") else "/memories"
    return mem.undo_act(act, scope=scope), where


def _accept(mem: Cairn, proposal: str, scope: str | None, form: Form) -> tuple[Any, str]:
    return mem.tidy_accept(proposal, scope=scope), "/tidy"


def _decline(mem: Cairn, proposal: str, scope: str | None, form: Form) -> tuple[Any, str]:
    return mem.tidy_decline(proposal, scope=scope), "/tidy"


ACTIONS: dict[tuple[str, str], Action] = {
    ("memories", "confirm"): Action(_confirm, "confirm"),
    ("memories", "unconfirm"): Action(_unconfirm, "unconfirm"),
    ("memories", "correct"): Action(_correct, "correct"),
    ("memories", "forget"): Action(_forget, "forget"),
    ("memories", "pin"): Action(_pin, "pin"),
    ("memories", "unpin"): Action(_unpin, "unpin"),
    ("memories", "purge"): Action(_purge, "purge"),
    ("acts", "undo"): Action(_undo_act, "undo"),
    ("tidy", "accept"): Action(_accept, "accept"),
    ("tidy", "decline"): Action(_decline, "decline"),
}

# What the page says after an action (the URL carries only the key, never text).
DID = {
    "confirm": "Confirmed: you said this still holds.",
    "unconfirm": "Your confirmation was taken back.",
    "correct": "Corrected: this is the new version; the old one keeps its text.",
    "forget": "Forgotten: recall no longer returns it.",
    "pin": "Pinned.",
    "unpin": "Unpinned.",
    "purge": "Purged: every version was erased; a tombstone event remains.",
    "undo": "The act was undone.",
    "accept": "Proposal accepted.",
    "decline": "Proposal declined; tidy will not make it again.",
}


def find(kind: str, verb: str) -> Action:
    action = ACTIONS.get((kind, verb))
    if action is None:
        raise NotFound(f"no action {verb[:30]!r} on {kind[:30]!r}; use the card's buttons.")
    return action
