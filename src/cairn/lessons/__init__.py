"""Lessons on tool calls: the few memories worth knowing before an agent's next action.

`calls` parses a tool call as agents make it (Claude Code's tools, or generic `path`/`command`/
`url` arguments); `locate` resolves its files and edited lines in the checkout; `matching`
finds the memories and procedures that are specifically about it; `select` filters, ranks and
budgets them; `tools` is the `LessonTools` mixin of `cairn.Cairn`; `hook` speaks the Claude
Code hook protocol and `claude_code` installs it.

Importing this package imports nothing else: the store's Protocol reads `lessons.models`.
"""
