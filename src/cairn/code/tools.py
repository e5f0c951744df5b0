"""`CodeTools`: the code-awareness and lifecycle tools of the `Cairn` facade.

Branch brief and goal, acts (merge, revert, discard, undo) and the git hooks that report them,
and tidy. The memory tools in `core.py` call the private helpers here to fill each hit's
citation, put the brief first when a query is about the branch, and rest idle memories.

Which checkout answers for a call: the directory the call names (`cwd`, else the facade's
default directory) when it is a checkout of the call's scope; else the folder memories of the
scope were last written from. A checkout of another project never answers for this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from cairn import lifecycle, tidy
from cairn.code import acts, brief, git, hooks
from cairn.code.citations import check, checkout_for, checkout_scope
from cairn.code.records import (
    UNCHECKED,
    ActResult,
    BranchBrief,
    CitationCheck,
    HookInstall,
    Proposal,
    TidyDecision,
)
from cairn.errors import InvalidInput
from cairn.models import Hit, Memory, RecallResult
from cairn.records.code import BranchGoal
from cairn.refs import parse_ref
from cairn.refusal import check_strings
from cairn.scope import visible_scopes
from cairn.stats import citation_health, index_freshness, recall_rates
from cairn.toolbase import ToolBase

MAX_GOAL_CHARS = 500
BRIEF_CHARS = 2_000


class CodeTools(ToolBase):
    # checkouts ----------------------------------------------------------------------------
    def _checkout(self, scope: str, cwd: str | Path | None) -> Path | None:
        """The caller's checkout when it belongs to `scope`, else None."""
        root = checkout_for(Path(cwd) if cwd is not None else self._default_cwd())
        if root is None:
            return None
        return root if checkout_scope(root) == scope else None

    def _project_root(self, scope: str, cwd: str | Path | None) -> Path | None:
        """The caller's checkout of `scope`, else the folder its memories were written from."""
        found = self._checkout(scope, cwd)
        if found is not None:
            return found
        for root in self._ctx.store.citation_roots(scope, 5):
            if Path(root).is_dir():
                return Path(root)
        return None

    # citations ----------------------------------------------------------------------------
    def _citation_checker(
        self, scope: str, cwd: str | Path | None, memories: Sequence[Memory]
    ) -> Callable[[Memory], CitationCheck]:
        """Checks citations of `memories` (and any other memory asked about) for one call."""
        store = self._ctx.store
        rows = store.get_citations([m.id for m in memories if m.source_ref])
        found: dict[str, Path | None] = {}

        def checkout_of(memory_scope: str) -> Path | None:
            if memory_scope not in found:
                found[memory_scope] = self._checkout(memory_scope, cwd)
            return found[memory_scope]

        def checker(memory: Memory) -> CitationCheck:
            if not memory.source_ref:
                return UNCHECKED
            row = rows.get(memory.id)
            if row is None:
                row = store.get_citations([memory.id]).get(memory.id)
            if row is None or row.kind == "url":
                return UNCHECKED
            return check(row, checkout_of(memory.scope if memory.scope != "global" else scope))

        return checker

    def _brief_hit(self, query: str, scope: str, cwd: str | Path | None, top: float) -> Hit | None:
        """The branch brief as a hit, when the query is about the checked-out branch."""
        root = self._checkout(scope, cwd)
        branch = git.current_branch(root) if root is not None else None
        if root is None or branch is None or not brief.asks_about_branch(query, branch):
            return None
        found = brief.branch_brief(self._ctx, root, scope)
        if found is None:
            return None
        return Hit(
            ref=found.ref, kind="brief", summary=found.summary_line(), score=round(top, 6),
            weak=False, source_ref=None, citation="unchecked", until=None, type="brief",
            scope=scope, content=found.render()[:BRIEF_CHARS],
        )  # fmt: skip

    def _with_brief(self, result: RecallResult, cwd: str | Path | None) -> RecallResult:
        """The recall answer with the branch brief first, when the query is about the branch."""
        top = result.hits[0].score if result.hits else 1.0
        found = self._brief_hit(result.query, result.scope, cwd, top)
        return result if found is None else replace(result, hits=(found, *result.hits))

    def _rest_idle(self, scope: str) -> list[int]:
        return lifecycle.rest_idle(self._ctx, visible_scopes(scope))

    def _code_stats(
        self, scopes: tuple[str, ...] | None, scope: str, cwd: str | Path | None
    ) -> dict[str, Any]:
        """Citation health, recall rates and index freshness for `stats`."""
        store = self._ctx.store
        rows = store.current_citations(list(scopes) if scopes is not None else None)
        checkouts: dict[str, Path | None] = {}
        statuses: list[str] = []
        for row in rows:
            if row.scope not in checkouts:
                checkouts[row.scope] = self._checkout(row.scope, cwd)
            statuses.append(check(row, checkouts[row.scope]).status)
        return {
            "citations": citation_health(statuses),
            "recall": recall_rates(store, scopes),
            "index": index_freshness(store, scopes, self._ctx.embedder.identity),
        }

    # branch -------------------------------------------------------------------------------
    def branch_brief(
        self,
        *,
        cwd: str | Path | None = None,
        scope: str | None = None,
        session_goal: str | None = None,
    ) -> BranchBrief | None:
        """Where work on the checked-out branch stands; None outside git or when detached."""
        resolved = self.scope_for(scope, cwd)
        root = checkout_for(Path(cwd) if cwd is not None else self._default_cwd())
        return brief.branch_brief(self._ctx, root, resolved, session_goal=session_goal)

    def set_branch_goal(
        self,
        goal: str,
        *,
        cwd: str | Path | None = None,
        scope: str | None = None,
        branch: str | None = None,
        session_id: str | None = None,
    ) -> BranchGoal:
        """Say what the branch is for; the brief shows it (the newest goal wins)."""
        for name, value in (("goal", goal), ("branch", branch), ("session_id", session_id)):
            check_strings(value, field=name)  # stored as given, so checked as given
        text = " ".join(goal.split()) if isinstance(goal, str) else ""
        if not text or len(text) > MAX_GOAL_CHARS:
            raise InvalidInput(
                f"a branch goal is one line of 1 to {MAX_GOAL_CHARS} characters, e.g. "
                "'Move billing to the new invoice API'."
            )
        resolved = self.scope_for(scope, cwd)
        name = branch or self._branch_here(cwd)
        record = BranchGoal(resolved, name, text, self._ctx.clock(), self._ctx.integration,
                            session_id)  # fmt: skip
        self._ctx.store.set_branch_goal(record)
        return record

    def branch_goal(
        self, *, cwd: str | Path | None = None, scope: str | None = None, branch: str | None = None
    ) -> BranchGoal | None:
        resolved = self.scope_for(scope, cwd)
        return self._ctx.store.get_branch_goal(resolved, branch or self._branch_here(cwd))

    def _branch_here(self, cwd: str | Path | None) -> str:
        directory = Path(cwd) if cwd is not None else self._default_cwd()
        name = git.current_branch(directory) if directory.is_dir() else None
        if name is None:
            raise InvalidInput(
                f"no branch is checked out at {directory} (not a git checkout, or a detached "
                "HEAD); pass branch= (--branch) or run from a checkout."
            )
        return name

    # acts ---------------------------------------------------------------------------------
    def observe_merge(
        self, branch: str, *, cwd: str | Path | None = None, scope: str | None = None
    ) -> ActResult:
        """The branch was merged: confirm the memories its sessions cited (`used`)."""
        return self._observe("merge", branch, cwd, scope)

    def observe_revert(
        self, commit: str, *, cwd: str | Path | None = None, scope: str | None = None
    ) -> ActResult:
        """A commit was reverted: contradict the memories cited on the branch it came from."""
        return self._observe("revert", commit, cwd, scope)

    def observe_discard(
        self, branch: str, *, cwd: str | Path | None = None, scope: str | None = None
    ) -> ActResult:
        """The branch was dropped unmerged: contradict the memories its sessions cited."""
        return self._observe("discard", branch, cwd, scope)

    def _observe(
        self, kind: str, subject: str, cwd: str | Path | None, scope: str | None
    ) -> ActResult:
        # The subject is stored with the act and its event, so it is checked as given.
        check_strings(subject, field="commit" if kind == "revert" else "branch")
        resolved = self.scope_for(scope, cwd)
        return acts.observe(self._ctx, kind, subject, resolved, self._project_root(resolved, cwd))

    def undo_act(
        self, act_id: str, *, cwd: str | Path | None = None, scope: str | None = None
    ) -> ActResult:
        """Take back an act: its confirmations or contradictions, and what they moved."""
        number = parse_ref(act_id, kind="act")
        return acts.undo(self._ctx, number, visible_scopes(self.scope_for(scope, cwd)))

    # hooks --------------------------------------------------------------------------------
    def install_hooks(self, *, cwd: str | Path | None = None) -> HookInstall:
        """Write the git hooks that report merges, reverts, discards and rewrites to this store."""
        directory = Path(cwd) if cwd is not None else self._default_cwd()
        return hooks.install(directory, self._ctx.store.location)

    def run_hook(
        self, name: str, args: Sequence[str], stdin: str = "", *, cwd: str | Path | None = None
    ) -> list[ActResult]:
        """What an installed hook does when git runs it (see `cairn.code.hooks`)."""
        directory = Path(cwd) if cwd is not None else self._default_cwd()
        root = git.toplevel(directory)
        if root is None or name not in hooks.HOOK_NAMES:
            return []
        if name == "post-rewrite":
            self._ctx.store.rewrite_commit_citations(hooks.rewritten_pairs(stdin))
            return []
        scope = self.scope_for(None, root)
        if name == "post-merge":
            merged = git.merged_branch(root)
            if merged and "/" in merged and git.resolve_branch(root, merged) is None:
                merged = merged.split("/", 1)[1]  # `git merge origin/x`: the work was on x
            squash = bool(args) and args[0] == "1"
            if squash or merged is None or merged == git.current_branch(root):
                return []
            return [acts.observe(self._ctx, "merge", merged, scope, root)]
        if name == "post-commit":
            head = git.head(root)
            text = git.message(root, head) if head else None
            reverted = git.reverted_commit(text or "")
            return [acts.observe(self._ctx, "revert", reverted, scope, root)] if reverted else []
        return self._discards(root, scope, args, stdin)

    def _discards(self, root: Path, scope: str, args: Sequence[str], stdin: str) -> list[ActResult]:
        if not args or args[0] != "committed":
            return []
        current = git.current_branch(root)
        base = git.default_branch(root, current) or current or "HEAD"
        out: list[ActResult] = []
        for branch, tip in hooks.deleted_branches(stdin):
            if git.resolve_branch(root, branch) is not None:
                continue  # still there: `pack-refs` reports moving loose refs as deletions
            if self._merged_before(root, scope, branch, tip, base):
                continue  # the merge was the act
            out.append(acts.observe(self._ctx, "discard", branch, scope, root))
        return out

    def _merged_before(
        self, root: Path, scope: str, branch: str, tip: str | None, base: str
    ) -> bool:
        # git often reports a deleted loose ref's old value as zeros, so the tip may be unknown.
        if tip is not None and (
            git.is_ancestor(root, tip, base) or git.is_ancestor(root, tip, "HEAD")
        ):
            return True
        return acts.was_merged(self._ctx, scope, branch) or git.merge_recorded(root, branch)

    # tidy ---------------------------------------------------------------------------------
    def tidy(
        self,
        *,
        cwd: str | Path | None = None,
        scope: str | None = None,
        skills_dir: str | None = None,
    ) -> list[Proposal]:
        """Open proposals: accept a newer claim as an update of an older one, merge
        near-duplicates, retire gone citations, resolve contradictions, turn recurring lessons
        into a skill file (`skills_dir`, default .claude/skills)."""
        resolved = self.scope_for(scope, cwd)
        return tidy.propose(self._ctx, resolved, self._checkout(resolved, cwd), skills_dir)

    def tidy_accept(
        self, proposal_id: str, *, cwd: str | Path | None = None, scope: str | None = None
    ) -> TidyDecision:
        """Carry out a proposal (update, merge, retire, resolve, or write the skill file)."""
        number = parse_ref(proposal_id, kind="tidy")
        return tidy.accept(self._ctx, number, self.scope_for(scope, cwd))

    def tidy_decline(
        self, proposal_id: str, *, cwd: str | Path | None = None, scope: str | None = None
    ) -> TidyDecision:
        """Decline a proposal; tidy never makes it again."""
        number = parse_ref(proposal_id, kind="tidy")
        return tidy.decline(self._ctx, number, self.scope_for(scope, cwd))
