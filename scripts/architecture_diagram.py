"""Draw docs/architecture.svg from the real import graph, collapsed to cairn's layers.

    python scripts/architecture_diagram.py            # rewrite docs/architecture.svg
    python scripts/architecture_diagram.py --check    # exit 1 if it would change

Every module of src/cairn belongs to one group (`GROUPS`, first matching prefix wins) and every
group to a layer, drawn top to bottom: adapters, the `Cairn` facade, the features, the `Store`
Protocol, the backends, and the foundation everything may use. An arrow is an import between
two groups (one or many module imports alike, so the picture changes only when a dependency
between groups appears or goes): grey going down a layer, blue within a layer, green from a
backend to the Protocol it implements, red going up (what the layering forbids). Imports into
the foundation are not drawn: every layer may use it. A module that no group claims is an
error, so a new package is placed on purpose.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from importgraph import import_graph  # noqa: E402 - the test kit that also checks for cycles

OUT = ROOT / "docs" / "architecture.svg"

LAYERS = (
    ("adapters", "adapters: CLI, MCP, hooks"),
    ("facade", "core: the Cairn facade"),
    ("features", "features"),
    ("protocol", "store: the Protocol, Context"),
    ("backends", "backends"),
    ("foundation", "foundation: used by all"),
)

# (module prefix, group, layer); the first match wins, so specific prefixes come first.
GROUPS: tuple[tuple[str, str, str], ...] = (
    ("cairn.adapters", "adapters", "adapters"),
    ("cairn.app", "app", "adapters"),
    ("cairn.bench", "bench", "adapters"),
    ("cairn.store.sqlite", "store/sqlite", "backends"),
    ("cairn.store.postgres", "store/postgres", "backends"),
    ("cairn.store", "store", "protocol"),
    ("cairn.core", "core", "facade"),
    ("cairn.toolbase", "core", "facade"),
    ("cairn.retrieval_tools", "core", "facade"),
    ("cairn.browse_tools", "core", "facade"),
    ("cairn.guard", "core", "facade"),
    # The facade is assembled from one mixin per feature, each in its feature's package.
    ("cairn.sessions.tools", "core", "facade"),
    ("cairn.lessons.tools", "core", "facade"),
    ("cairn.code.tools", "core", "facade"),
    ("cairn.importers.tools", "core", "facade"),
    ("cairn.context", "context", "protocol"),
    ("cairn.ranking", "ranking", "features"),
    ("cairn.sessions", "sessions", "features"),
    ("cairn.lessons", "lessons", "features"),
    ("cairn.code", "code", "features"),
    ("cairn.pages", "pages", "features"),
    ("cairn.page_source", "pages", "features"),
    ("cairn.importers", "importers", "features"),
    ("cairn.exchange", "exchange", "features"),
    ("cairn.migrate", "exchange", "features"),
    ("cairn.integrity", "exchange", "features"),
    ("cairn.embeddings", "embeddings", "foundation"),
    ("cairn.secretscan", "secretscan", "foundation"),
    ("cairn.models", "foundation", "foundation"),
    ("cairn.records", "foundation", "foundation"),
    ("cairn.errors", "foundation", "foundation"),
    ("cairn.config", "foundation", "foundation"),
    ("cairn.timeutil", "foundation", "foundation"),
    ("cairn.lru", "foundation", "foundation"),
    ("cairn.refusal", "foundation", "foundation"),
    ("cairn.scope", "foundation", "foundation"),
    ("cairn.scope_file", "foundation", "foundation"),
    ("cairn.gitproc", "foundation", "foundation"),
    ("cairn.refs", "foundation", "foundation"),
    ("cairn.tags", "foundation", "foundation"),
    # The memory lifecycle: remember, correct, forget, evidence, tidy, consolidation, stats.
    ("cairn.", "memories", "features"),
    ("cairn", "core", "facade"),  # the package itself: `from cairn import Cairn`
)


def group_of(module: str) -> tuple[str, str]:
    """The (group, layer) of a module: the first prefix that is the module, one of its
    parent packages, or (ending in a dot) any module below it."""
    for prefix, group, layer in GROUPS:
        if module == prefix or module.startswith(prefix if prefix.endswith(".") else prefix + "."):
            return group, layer
    raise KeyError(f"{module} is in no group of scripts/architecture_diagram.py; add it")


def group_edges() -> tuple[dict[str, str], Counter[tuple[str, str]]]:
    """Group -> layer, and (from, to) group -> how many module imports make that edge."""
    layers: dict[str, str] = {}
    edges: Counter[tuple[str, str]] = Counter()
    for module, targets in import_graph().items():
        group, layer = group_of(module)
        layers[group] = layer
        for target in targets:
            other, _ = group_of(target)
            if other != group:
                edges[(group, other)] += 1
    return layers, edges


# Drawing ---------------------------------------------------------------------------------------
WIDTH = 1060
LABEL_W = 150
BAND_H = 92
BOX_H = 34
TOP = 56
LEGEND = (
    ("down", "grey: down a layer"),
    ("level", "blue: within a layer"),
    ("plugs", "green: a backend uses the Protocol's types"),
    ("up", "red: up a layer (forbidden)"),
)
COLOURS = {"down": "#8a8f98", "level": "#3b6fc4", "up": "#d43c3c", "plugs": "#3c9a4a"}


def edge_kind(src_layer: str, dst_layer: str) -> str:
    """down, level, up, or plugs: a backend importing the Protocol it implements."""
    order = [layer for layer, _ in LAYERS]
    step = order.index(dst_layer) - order.index(src_layer)
    if step < 0 and (src_layer, dst_layer) == ("backends", "protocol"):
        return "plugs"
    return "down" if step > 0 else "level" if step == 0 else "up"


def _positions(layers: dict[str, str]) -> dict[str, tuple[float, float, float]]:
    """Group -> (centre x, top y, width) of its box: the groups of a layer spread evenly."""
    placed: dict[str, tuple[float, float, float]] = {}
    for row, (layer, _) in enumerate(LAYERS):
        members = sorted(g for g, lay in layers.items() if lay == layer)
        span = (WIDTH - LABEL_W - 20) / max(len(members), 1)
        for i, group in enumerate(members):
            x = LABEL_W + span * (i + 0.5)
            placed[group] = (x, TOP + row * BAND_H + (BAND_H - BOX_H) / 2, min(span - 14, 150))
    return placed


def _edge(a: tuple[float, float, float], b: tuple[float, float, float], kind: str) -> str:
    (ax, ay, _), (bx, by, _) = a, b
    if kind == "level":  # an arc over the boxes of the same layer
        lift = 22 + abs(bx - ax) / 14
        bend = f"{ax:.1f},{ay - lift:.1f} {bx:.1f},{by - lift:.1f}"
        return f"M{ax:.1f},{ay:.1f} C{bend} {bx:.1f},{by:.1f}"
    if kind in ("up", "plugs"):
        return f"M{ax:.1f},{ay:.1f} L{bx:.1f},{by + BOX_H:.1f}"
    return f"M{ax:.1f},{ay + BOX_H:.1f} L{bx:.1f},{by:.1f}"


def render(layers: dict[str, str], edges: Counter[tuple[str, str]]) -> str:
    order = {layer: row for row, (layer, _) in enumerate(LAYERS)}
    placed = _positions(layers)
    height = TOP + BAND_H * len(LAYERS) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif">',
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        "<defs>",
    ]
    for kind, colour in COLOURS.items():
        out.append(
            f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" '
            f'markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            f'fill="{colour}"/></marker>'
        )
    out.append("</defs>")
    out.append(
        '<text x="16" y="26" font-size="16" font-weight="bold">cairn: imports between '
        "layers (generated by scripts/architecture_diagram.py)</text>"
    )
    x = 16
    for kind, words in LEGEND:
        out.append(
            f'<text x="{x}" y="44" font-size="11" fill="{COLOURS[kind]}" font-weight="bold">'
            f"{escape(words)}</text>"
        )
        x += 7 * len(words) + 24
    for row, (_, title) in enumerate(LAYERS):
        y = TOP + row * BAND_H
        fill = "#f4f6f9" if row % 2 == 0 else "#ffffff"
        out.append(f'<rect x="0" y="{y}" width="{WIDTH}" height="{BAND_H}" fill="{fill}"/>')
        words = escape(title).split(": ")
        for i, line in enumerate(words):
            out.append(
                f'<text x="12" y="{y + 30 + 15 * i}" font-size="12" fill="#333">'
                f"{line}{':' if i < len(words) - 1 else ''}</text>"
            )
    for src, dst in sorted(edges):
        if layers[dst] == "foundation" and order[layers[src]] <= order["foundation"]:
            continue  # everything may use the foundation
        kind = edge_kind(layers[src], layers[dst])
        out.append(
            f'<path d="{_edge(placed[src], placed[dst], kind)}" fill="none" '
            f'stroke="{COLOURS[kind]}" stroke-opacity="0.7" stroke-width="1.4" '
            f'marker-end="url(#arrow-{kind})"><title>{escape(src)} imports {escape(dst)}</title>'
            "</path>"
        )
    for group, (x, y, w) in sorted(placed.items()):
        out.append(
            f'<rect x="{x - w / 2:.1f}" y="{y:.1f}" width="{w:.1f}" height="{BOX_H}" rx="6" '
            'fill="#fffbe8" stroke="#444" stroke-width="1"/>'
        )
        out.append(
            f'<text x="{x:.1f}" y="{y + BOX_H / 2 + 4:.1f}" font-size="12" text-anchor="middle">'
            f"{escape(group)}</text>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the picture is stale")
    args = parser.parse_args()
    picture = render(*group_edges())
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != picture:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/architecture_diagram.py")
            return 1
        return 0
    OUT.write_text(picture, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
