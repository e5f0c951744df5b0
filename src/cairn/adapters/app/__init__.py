"""The app: people see, confirm, correct and undo what their agents remember.

Server-rendered pages (Jinja2 templates under `templates/`, a little plain JavaScript under
`static/`, nothing fetched from elsewhere) over the same `Cairn` methods the CLI and MCP use.
`cairn ui` serves it alone; `cairn serve` serves it beside MCP.
"""
