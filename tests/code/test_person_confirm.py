"""A person's confirmation (`cairn confirm`, `confirm(ref, person=...)`): its own integration,
never an echo of the client that wrote the memory, restoring what acts contradicted, undoable."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from cairn import Cairn, Conflict, InvalidInput
from cairn.adapters.cli import main
from cairn.models import Memory

from .conftest import Repo
from .test_acts import cite_on

Factory = Callable[..., Cairn]


def memory(mem: Cairn, ref: str) -> Memory:
    return mem.get_memory([ref]).records[0].memory


def contradicted_twice(repo: Repo, mem: Cairn, ref: str) -> None:
    for branch in ("spike/one", "spike/two"):
        cite_on(repo, mem, branch, ref)
        mem.observe_discard(branch)
    assert memory(mem, ref).status == "resting"


def test_a_person_confirming_a_cli_memory_counts_and_restores_it(
    repo: Repo, mem_in: Factory
) -> None:
    cli = mem_in(repo.path, integration="cli")  # the memory is written from the CLI
    ref = cli.remember("Cache the tokens in memory", type="decision").memory_id
    contradicted_twice(repo, cli, ref)
    echo = cli.confirm(ref)  # the CLI client restating its own memory: an echo
    assert echo.outcome == "echo" and memory(cli, ref).status == "resting"
    done = cli.confirm(ref, person="alice")
    assert done.outcome == "confirmation" and done.counted and done.integration == "person:alice"
    assert done.status == "active" and "--undo" in done.message
    after = memory(cli, ref)
    assert (after.status, after.confirmed, after.contradicted) == ("active", 1, 2)
    assert after.evidence["clients"]["person:alice"]["confirmed"] == 1
    assert "person:alice" in after.evidence["people"]
    assert ref in cli.recall("cache tokens memory", cut=False).refs
    again = cli.confirm(ref, person="alice")
    assert again.outcome == "repeat" and not again.counted and memory(cli, ref).confirmed == 1
    bob = cli.confirm(ref, person="bob")
    assert bob.counted and memory(cli, ref).confirmed == 2


def test_undo_takes_the_confirmation_back_and_is_an_event(repo: Repo, mem_in: Factory) -> None:
    cli = mem_in(repo.path, integration="cli")
    ref = cli.remember("Cache the tokens in memory", type="decision").memory_id
    contradicted_twice(repo, cli, ref)
    cli.confirm(ref, person="alice")
    undone = cli.unconfirm(ref, person="alice")
    assert undone.outcome == "undone" and undone.status == "resting"
    after = memory(cli, ref)
    assert (after.status, after.confirmed) == ("resting", 0)
    assert (
        after.evidence["rest"] == "contradicted" and "person:alice" not in after.evidence["people"]
    )
    events = [e for e in cli.store.iter_events() if e.memory_id == after.id]
    assert [(e.kind, e.integration) for e in events if e.kind in ("confirm", "unconfirm")] == [
        ("confirm", "person:alice"), ("unconfirm", "person:alice"),
    ]  # fmt: skip
    with pytest.raises(Conflict, match="no confirmation by person:alice"):
        cli.unconfirm(ref, person="alice")
    assert cli.confirm(ref, person="alice").counted  # confirming anew counts again


def test_undo_of_a_confirmation_that_woke_an_idle_memory_rests_it_again(
    repo: Repo, mem_in: Factory, clock: object
) -> None:
    cli = mem_in(repo.path, integration="cli")
    ref = cli.remember("Logs go to stdout", type="fact").memory_id
    clock.advance(days=31)  # type: ignore[attr-defined]
    cli.recall("logs stdout")
    assert memory(cli, ref).status == "resting"
    assert cli.confirm(ref, person="").status == "active"  # an unnamed person
    assert memory(cli, ref).evidence["people"].keys() == {"person"}
    assert cli.unconfirm(ref, person="").status == "resting"
    assert memory(cli, ref).evidence["rest"] == "idle"


def test_person_names_are_checked(repo: Repo, mem_in: Factory) -> None:
    cli = mem_in(repo.path, integration="cli")
    ref = cli.remember("Logs go to stdout", type="fact").memory_id
    for bad in ("alice smith", "x" * 65, "../etc", "a\nb"):
        with pytest.raises(InvalidInput, match="person"):
            cli.confirm(ref, person=bad)
    assert memory(cli, ref).confirmed == 0


def test_cairn_confirm_and_undo_on_the_command_line(
    repo: Repo, mem_in: Factory, store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = mem_in(repo.path, integration="cli")
    ref = cli.remember("Cache the tokens in memory", type="decision").memory_id
    contradicted_twice(repo, cli, ref)
    monkeypatch.setenv("CAIRN_PERSON", "carol")

    def run(*args: str) -> str:
        result = CliRunner().invoke(main, ["--store", store_location, *args,
                                           "--cwd", str(Path(repo.path))])  # fmt: skip
        assert result.exit_code == 0, result.output
        return result.output

    assert run("confirm", ref).startswith(f"{ref} confirmed by person:carol")
    assert memory(cli, ref).status == "active"
    assert "taken back" in run("confirm", "--undo", ref)
    assert memory(cli, ref).status == "resting"
    assert "confirmed by person:dave" in run("confirm", ref, "--person", "dave")
    assert "taken back" in run("unconfirm", ref, "--person", "dave")
    refused = CliRunner().invoke(main, ["--store", store_location, "unconfirm", ref,
                                        "--cwd", str(repo.path)])  # fmt: skip
    assert refused.exit_code == 2 and refused.output.startswith("error: ")


def test_a_person_confirming_what_they_wrote_still_counts(repo: Repo, mem_in: Factory) -> None:
    app = mem_in(repo.path, integration="person:alice")  # written as the person (a web app)
    ref = app.remember("Logs go to stdout", type="fact").memory_id
    assert app.confirm(ref).outcome == "echo"  # the same client restating: an echo
    assert app.confirm(ref, person="alice").counted  # the person saying it holds: counts
    assert memory(app, ref).confirmed == 1
