"""Issue 19, ninth round: a learned linear fusion over per-candidate features, held out by
leave-one-conversation-out (docs/benchmarks.md, "Ninth round"). Not product code: a replay.

Run from the repository root, one heavy step at a time (`extract` about 40 s a mode, `fit`
2-7 minutes a model kind, `latency` about 40 s):

    export PYTHONPATH=src
    PY=.venv/bin/python
    EXP=docs/experiments/issue19-learned-fusion.py
    $PY $EXP extract --data ../shared/bench/locomo --mode turns --out /tmp/ltr-turns.pkl
    $PY $EXP extract --data ../shared/bench/locomo --mode observations --out /tmp/ltr-obs.pkl
    $PY $EXP fit /tmp/ltr-turns.pkl --kinds ranknet,pointwise,lambda
    $PY $EXP fit /tmp/ltr-obs.pkl --kinds ranknet,pointwise,lambda
    $PY $EXP fit /tmp/ltr-turns.pkl --kinds ranknet --drop log_len   # a diagnostic
    $PY $EXP latency --data ../shared/bench/locomo

It needs numpy and scipy (scipy is in the dev environment, through sentence-transformers).

`extract` stores the five conversations as `cairn bench locomo` does (one scope each, one
store), asks every question of categories 1-4 with evidence through the product's own
`retrieve(..., cut=False)` with the shipped `RECIPE`, once at `limit=10` (what `cairn bench
locomo-fit` asks: the shipped figure) and once at `limit=100` (the candidate pool, in the
shipped order), and keeps for each of the 100 candidates the FEATURES below: read from what
`retrieve` computes or loads (the phrasing's keyword scores, documents and idf, its window
cosines, the loaded memories), plus the first-pass window cosines and the own-vector cosines.

`fit`, for each conversation held out, trains a linear model on the other four only and
re-orders the held-out conversation's pools with it; the five held-out rankings are pooled.
The model's L2 strength (and, for RankNet, how deep in the shipped order the negatives go) is
chosen by an inner leave-one-conversation-out over the four training conversations (best mean
R@5 + R@10). Kinds: `ranknet` (pairwise logistic over relevant/non-relevant pairs, each
question's pairs weighing one in all), `pointwise` (weighted logistic regression on relevance),
`lambda` (pairwise, each pair weighted by how much swapping the two moves a rank discount cut
at 20, re-weighted three times from the current order). Features are standardised on the
training folds. Nothing is chosen on the held-out conversation. The fit on all five is printed
too: it is the weights a product version would carry, not a figure to report.
"""

from __future__ import annotations

import argparse
import math
import pickle
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FEATURES = (
    "score_rel",  # shipped final score / the question's best shipped score
    "dense_fb",  # window cosine to the feedback-moved query (the shipped dense part)
    "dense_q",  # window cosine to the query itself (first pass)
    "own_cos",  # the memory's own vector against the query
    "lex_norm",  # BM25F / the question's best BM25F (0 without a keyword match)
    "log_rank_dense",  # log(1 + rank) in the dense (feedback) list
    "log_rank_lex",  # log(1 + rank) in the keyword list (pool + 1 when absent)
    "coverage",  # share of the query's idf the memory itself holds
    "other_speaker",  # 1 when the query names another speaker
    "date_match",  # 1 when the memory occurred in a range the query names
    "session_top10",  # log(1 + shipped top-10 memories of the same session, itself excluded)
    "adjacent_top3",  # 1 when within 2 memories of one of the shipped top 3 in its session
    "log_len",  # log(1 + words)
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)
POOL = 100


# extract ----------------------------------------------------------------------------------
@dataclass
class QuestionRows:
    conv: str
    category: int
    text: str
    evidence: tuple[str, ...]
    shipped10: tuple[tuple[str, ...], ...]  # dia ids of retrieve(limit=10)
    found: list[tuple[str, ...]]  # dia ids of the 100 candidates, shipped order
    ids: list[int]
    x: np.ndarray  # (n, len(FEATURES))


def extract(data: Path, mode: str, out: Path) -> None:
    import cairn.ranking.recall as recall
    from cairn.bench.locomo import LocomoSource, ingest, scratch_cairn
    from cairn.config import Settings
    from cairn.embeddings import make_embedder
    from cairn.ranking.fusion import RECIPE
    from cairn.ranking.recall import LEXICAL_POOL, RecallQuery, retrieve
    from cairn.scope import visible_scopes
    from cairn.store.base import MemoryFilter

    captured: list[Any] = []
    original = recall.candidates

    def capturing(*args: Any, **kwargs: Any) -> Any:
        phrasing = original(*args, **kwargs)
        captured.append(phrasing)
        return phrasing

    recall.candidates = capturing  # type: ignore[assignment]
    source = LocomoSource(data, mode)
    convs = source.load()
    settings = Settings.from_env()
    embedder = make_embedder(settings)
    rows: list[QuestionRows] = []
    with scratch_cairn(settings, embedder, "cairn-ltr-") as mem:
        ctx = mem._ctx
        for conv in convs:
            scope = f"project:locomo/{conv.name}"
            refs = ingest(mem, conv, scope, mode)
            filt = MemoryFilter(scopes=visible_scopes(scope))
            for q in conv.questions:
                if not q.evidence:
                    continue
                short = retrieve(ctx, RecallQuery(q.text, filt, 10, cut=False), RECIPE)
                captured.clear()
                hits = retrieve(ctx, RecallQuery(q.text, filt, POOL, cut=False), RECIPE)
                phrasing = captured[-1]
                rows.append(
                    QuestionRows(
                        conv.name,
                        q.category,
                        q.text,
                        tuple(q.evidence),
                        tuple(refs.get(s.memory.ref, ()) for s in short),
                        [refs.get(s.memory.ref, ()) for s in hits],
                        [s.memory.id for s in hits],
                        _features(ctx, filt, phrasing, hits, LEXICAL_POOL),
                    )
                )
            print(f"conversation {conv.name}: {len(refs)} memories", file=sys.stderr)
    with out.open("wb") as fh:
        pickle.dump({"mode": mode, "features": FEATURES, "rows": rows}, fh)


def _features(
    ctx: Any,
    filt: Any,
    phrasing: Any,
    hits: list[Any],
    lexical_pool: int,
    first: dict[int, float] | None = None,
) -> np.ndarray:
    """The FEATURES of each candidate; `first` the first-pass window cosines when known."""
    ids = [s.memory.id for s in hits]
    lexical = phrasing.lexical.scores
    best_lex = max(lexical.values(), default=0.0)
    dense_order = sorted(phrasing.dense, key=lambda i: (-phrasing.dense[i], -i))
    dense_rank = {i: r for r, i in enumerate(dense_order, start=1)}
    lex_order = sorted(lexical, key=lambda i: (-lexical[i], -i))
    lex_rank = {i: r for r, i in enumerate(lex_order, start=1)}
    if first is None:
        first = ctx.store.window_similarities(filt, ctx.embedder.identity, phrasing.vector, 0, ids)
    vectors = ctx.store.get_vectors(ids, ctx.embedder.identity)
    query = np.asarray(phrasing.vector, dtype=np.float32)
    top = hits[0].score if hits and hits[0].score > 0 else 1.0
    session = [s.memory.session_id for s in hits]
    top10 = [(session[r], ids[r]) for r in range(min(10, len(hits)))]
    top3 = top10[:3]
    out = np.zeros((len(hits), len(FEATURES)), dtype=np.float64)
    for r, s in enumerate(hits):
        i = s.memory.id
        same = sum(1 for sess, j in top10 if sess == session[r] and j != i)
        adjacent = any(sess == session[r] and j != i and abs(j - i) <= 2 for sess, j in top3)
        own = vectors.get(i)
        out[r] = (
            s.score / top,
            s.parts.get("dense", 0.0),
            first.get(i, 0.0),
            float(own @ query) if own is not None else 0.0,
            lexical.get(i, 0.0) / best_lex if best_lex > 0 else 0.0,
            math.log1p(dense_rank.get(i, len(dense_rank) + 1)),
            math.log1p(lex_rank.get(i, lexical_pool + 1)),
            phrasing.lexical.coverage(i),
            1.0 if s.parts.get("speaker", 1.0) != 1.0 else 0.0,
            1.0 if s.parts.get("date", 1.0) != 1.0 else 0.0,
            math.log1p(same),
            1.0 if adjacent else 0.0,
            math.log1p(len(s.memory.content.split())),
        )
    return out


# metrics ----------------------------------------------------------------------------------
def recall_at(found: Any, evidence: tuple[str, ...], k: int) -> float:
    wanted = set(evidence)
    seen = {d for ids in found[:k] for d in ids}
    return len(wanted & seen) / len(wanted)


def order_by(q: QuestionRows, scores: np.ndarray) -> list[tuple[str, ...]]:
    # best first; a tie falls to the newer memory, as in the product
    idx = sorted(range(len(q.ids)), key=lambda r: (-round(float(scores[r]), 9), -q.ids[r]))
    return [q.found[r] for r in idx]


def pooled(rows: list[tuple[int, float, float]]) -> dict[str, tuple[float, float]]:
    groups = {"all": rows}
    for number, label in CATEGORIES.items():
        groups[label] = [r for r in rows if r[0] == number]
    return {
        g: (statistics.fmean(r[1] for r in v), statistics.fmean(r[2] for r in v))
        for g, v in groups.items()
        if v
    }


def score_rows(qs: list[QuestionRows], scorer: Any) -> list[tuple[int, float, float]]:
    out = []
    for q in qs:
        found = order_by(q, scorer(q.x))
        out.append((q.category, recall_at(found, q.evidence, 5), recall_at(found, q.evidence, 10)))
    return out


def objective(rows: list[tuple[int, float, float]]) -> float:
    return statistics.fmean(r[1] + r[2] for r in rows)


# models -----------------------------------------------------------------------------------
def labels(q: QuestionRows) -> np.ndarray:
    wanted = set(q.evidence)
    return np.array([1.0 if wanted & set(ids) else 0.0 for ids in q.found])


def standardiser(qs: list[QuestionRows]) -> tuple[np.ndarray, np.ndarray]:
    stacked = np.vstack([q.x for q in qs])
    mean, std = stacked.mean(axis=0), stacked.std(axis=0)
    std[std < 1e-9] = 1.0
    return mean, std


def pair_data(
    qs: list[QuestionRows], mean: np.ndarray, std: np.ndarray, depth: int
) -> tuple[np.ndarray, np.ndarray]:
    """Difference vectors (relevant minus non-relevant among the shipped top `depth`), each
    question's pairs weighted to sum to one."""
    diffs, weights = [], []
    for q in qs:
        y = labels(q)
        z = (q.x - mean) / std
        pos = np.flatnonzero(y == 1.0)
        neg = np.flatnonzero(y[:depth] == 0.0)
        if len(pos) == 0 or len(neg) == 0:
            continue
        d = (z[pos][:, None, :] - z[neg][None, :, :]).reshape(-1, z.shape[1])
        diffs.append(d)
        weights.append(np.full(len(d), 1.0 / len(d)))
    return np.vstack(diffs), np.concatenate(weights)


def fit_ranknet(d: np.ndarray, w: np.ndarray, l2: float) -> np.ndarray:
    """min sum_w log(1 + exp(-d.theta)) / sum_w + l2/2 |theta|^2 (no intercept)."""
    from scipy.optimize import minimize

    total = w.sum()

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        m = d @ theta
        value = float(np.sum(w * np.logaddexp(0.0, -m)) / total + 0.5 * l2 * theta @ theta)
        sig = 0.5 * (1.0 - np.tanh(0.5 * m))  # = 1 / (1 + exp(m))
        grad = -(d.T @ (w * sig)) / total + l2 * theta
        return value, grad

    res = minimize(loss, np.zeros(d.shape[1]), jac=True, method="L-BFGS-B")
    return np.asarray(res.x)


def fit_pointwise(
    qs: list[QuestionRows], mean: np.ndarray, std: np.ndarray, l2: float
) -> np.ndarray:
    """Weighted logistic regression on relevance (each question's candidates weigh one in all),
    L2 on the weights, not the intercept; the intercept does not change an order."""
    from scipy.optimize import minimize

    x = np.vstack([(q.x - mean) / std for q in qs])
    y = np.concatenate([labels(q) for q in qs])
    w = np.concatenate([np.full(len(q.ids), 1.0 / len(q.ids)) for q in qs])
    total = w.sum()
    sign = 2.0 * y - 1.0

    def loss(params: np.ndarray) -> tuple[float, np.ndarray]:
        theta, bias = params[:-1], params[-1]
        m = sign * (x @ theta + bias)
        value = float(np.sum(w * np.logaddexp(0.0, -m)) / total + 0.5 * l2 * theta @ theta)
        g = -(w * sign * 0.5 * (1.0 - np.tanh(0.5 * m))) / total
        return value, np.concatenate([x.T @ g + l2 * theta, [g.sum()]])

    res = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B")
    return np.asarray(res.x[:-1])


L2_GRID = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
DEPTHS = (20, POOL)


@dataclass
class Model:
    kind: str
    l2: float
    depth: int
    mean: np.ndarray
    std: np.ndarray
    theta: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ((x - self.mean) / self.std) @ self.theta


LAMBDA_CUT = 20  # ranks past which a place is worth nothing to the lambda weights
LAMBDA_ROUNDS = 3


def lambda_pairs(
    qs: list[QuestionRows], mean: np.ndarray, std: np.ndarray, theta: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """LambdaRank-style pairs: every (relevant, non-relevant) pair weighted by how much swapping
    their places under the current order (the shipped one at first) moves a discount
    1/log2(1 + rank) cut at LAMBDA_CUT; each question's weights sum to one."""
    diffs, weights = [], []
    for q in qs:
        y = labels(q)
        z = (q.x - mean) / std
        scores = q.x[:, 0] if theta is None else z @ theta
        order = sorted(range(len(y)), key=lambda r: (-scores[r], -q.ids[r]))
        rank = np.empty(len(y))
        rank[order] = np.arange(1, len(y) + 1)
        gain = np.where(rank <= LAMBDA_CUT, 1.0 / np.log2(1.0 + rank), 0.0)
        pos = np.flatnonzero(y == 1.0)
        neg = np.flatnonzero(y == 0.0)
        if len(pos) == 0 or len(neg) == 0:
            continue
        w = np.abs(gain[pos][:, None] - gain[neg][None, :]).reshape(-1)
        if w.sum() <= 0.0:
            continue
        d = (z[pos][:, None, :] - z[neg][None, :, :]).reshape(-1, z.shape[1])
        keep = w > 0.0
        diffs.append(d[keep])
        weights.append(w[keep] / w.sum())
    return np.vstack(diffs), np.concatenate(weights)


def train(qs: list[QuestionRows], kind: str, l2: float, depth: int) -> Model:
    mean, std = standardiser(qs)
    if kind == "ranknet":
        d, w = pair_data(qs, mean, std, depth)
        theta = fit_ranknet(d, w, l2)
    elif kind == "lambda":
        theta = None
        for _ in range(LAMBDA_ROUNDS):
            d, w = lambda_pairs(qs, mean, std, theta)
            theta = fit_ranknet(d, w, l2)
        assert theta is not None
    else:
        theta = fit_pointwise(qs, mean, std, l2)
    return Model(kind, l2, depth, mean, std, theta)


def settings_for(kind: str) -> list[tuple[float, int]]:
    return [(l2, depth) for l2 in L2_GRID for depth in (DEPTHS if kind == "ranknet" else (POOL,))]


def choose(qs: list[QuestionRows], kind: str) -> tuple[float, int, float]:
    """The (l2, depth) best by an inner leave-one-conversation-out over `qs` only."""
    convs = sorted({q.conv for q in qs})
    best: tuple[float, float, int] | None = None
    for l2, depth in settings_for(kind):
        rows = []
        for inner in convs:
            fitted = train([q for q in qs if q.conv != inner], kind, l2, depth)
            rows += score_rows([q for q in qs if q.conv == inner], fitted)
        value = objective(rows)
        if best is None or value > best[0] + 1e-12:
            best = (value, l2, depth)
    assert best is not None
    return best[1], best[2], best[0]


def fit(path: Path, kinds: tuple[str, ...], drop: tuple[str, ...] = ()) -> None:
    with path.open("rb") as fh:
        blob = pickle.load(fh)
    qs: list[QuestionRows] = blob["rows"]
    if drop:
        keep = [i for i, name in enumerate(FEATURES) if name not in drop]
        assert keep[0] == 0, "score_rel (column 0) is the shipped order and stays"
        for q in qs:
            q.x = q.x[:, keep]
        print("features dropped:", ", ".join(drop))
    convs = sorted({q.conv for q in qs})
    print(f"{blob['mode']}: {len(qs)} questions, {len(convs)} conversations")
    shipped10 = [
        (q.category, recall_at(q.shipped10, q.evidence, 5), recall_at(q.shipped10, q.evidence, 10))
        for q in qs
    ]
    pool_shipped = score_rows(qs, lambda x: x[:, 0])
    ceiling = [
        (q.category, recall_at(q.found, q.evidence, 100), recall_at(q.found, q.evidence, 100))
        for q in qs
    ]
    table = {
        "shipped, retrieve limit 10": pooled(shipped10),
        "shipped score over the 100-pool": pooled(pool_shipped),
    }
    print("ceiling of the 100-pool (R@100):", round(pooled(ceiling)["all"][1], 4))
    folds: dict[str, list[Any]] = {}
    for kind in kinds:
        held_rows, fold_info = [], []
        for held in convs:
            train_qs = [q for q in qs if q.conv != held]
            l2, depth, inner = choose(train_qs, kind)
            model = train(train_qs, kind, l2, depth)
            rows = score_rows([q for q in qs if q.conv == held], model)
            held_rows += rows
            base = [r for q, r in zip(qs, shipped10, strict=True) if q.conv == held]
            fold_info.append(
                (held, l2, depth, inner, pooled(base)["all"], pooled(rows)["all"], model.theta)
            )
            print(
                f"  {kind} fold {held}: l2 {l2:g} depth {depth} inner {inner:.4f} "
                f"held {pooled(base)['all']} -> {pooled(rows)['all']}",
                flush=True,
            )
        table[f"{kind}, held out"] = pooled(held_rows)
        ordered = {
            id(q): r
            for q, r in zip([q for c in convs for q in qs if q.conv == c], held_rows, strict=True)
        }
        paired = [(ordered[id(q)], base) for q, base in zip(qs, shipped10, strict=True)]
        for i, k in ((1, 5), (2, 10)):
            up = sum(1 for a, b in paired if a[i] > b[i] + 1e-9)
            down = sum(1 for a, b in paired if a[i] < b[i] - 1e-9)
            print(f"  {kind} R@{k}: better on {up} questions, worse on {down}")
        folds[kind] = fold_info
        # the in-sample fit on all five (not a figure to report)
        l2, depth, _ = choose(qs, kind)
        model = train(qs, kind, l2, depth)
        table[f"{kind}, in-sample on all (not to report)"] = pooled(score_rows(qs, model))
        fold_info.append(("all", l2, depth, float("nan"), None, None, model.theta))
    print()
    print("| ranking | all | multi-hop | temporal | open-domain | single-hop |")
    print("|---|---|---|---|---|---|")
    for name, groups in table.items():
        cells = [f"{groups[g][0]:.4f} / {groups[g][1]:.4f}" for g in ("all", *CATEGORIES.values())]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for kind, info in folds.items():
        print()
        print(f"{kind} weights (standardised features), per held-out fold:")
        names = [name for name in FEATURES if name not in drop]
        print("| fold | l2 | depth | " + " | ".join(names) + " |")
        print("|---" * (3 + len(names)) + "|")
        for held, l2, depth, _, _, _, theta in info:
            print(f"| {held} | {l2:g} | {depth} | " + " | ".join(f"{t:+.2f}" for t in theta) + " |")
    with path.with_suffix(".fit.pkl").open("wb") as fh:
        pickle.dump({"table": table, "folds": folds}, fh)


# latency ----------------------------------------------------------------------------------
def latency(data: Path, conversations: tuple[str, ...]) -> None:
    """Same process, interleaved (order alternated per question), the query-vector cache emptied
    before every call: the shipped `retrieve(limit=10)` against the learned scorer's path -
    `retrieve(limit=100)`, the pool's own vectors read, the features built, a dot product and a
    sort. The first-pass window cosines are not re-read (a product version would keep them from
    the first pass); the weights are arbitrary (only the time is measured)."""
    import time
    from functools import partial

    import cairn.ranking.recall as recall
    from cairn.bench.locomo import LocomoSource, ingest, scratch_cairn
    from cairn.config import Settings
    from cairn.context import QUERY_CACHE_SIZE
    from cairn.embeddings import make_embedder
    from cairn.lru import Lru
    from cairn.ranking.fusion import RECIPE
    from cairn.ranking.recall import RecallQuery, retrieve
    from cairn.scope import visible_scopes
    from cairn.store.base import MemoryFilter

    captured: list[Any] = []
    original = recall.candidates

    def capturing(*args: Any, **kwargs: Any) -> Any:
        captured.append(original(*args, **kwargs))
        return captured[-1]

    recall.candidates = capturing  # type: ignore[assignment]
    theta = np.random.default_rng(0).normal(size=len(FEATURES))

    def learned(ctx: Any, text: str, filt: Any) -> list[Any]:
        captured.clear()
        hits = retrieve(ctx, RecallQuery(text, filt, POOL, cut=False), RECIPE)
        x = _features(ctx, filt, captured[-1], hits, POOL, first={})
        order = np.argsort(-(x @ theta), kind="stable")
        return [hits[o] for o in order[:10]]

    settings = Settings.from_env()
    embedder = make_embedder(settings)
    embedder.embed_many(["warm up"])
    shipped, new = [], []
    with scratch_cairn(settings, embedder, "cairn-ltr-latency-") as mem:
        ctx = mem._ctx
        for conv in LocomoSource(data, "turns", conversations=conversations).load():
            scope = f"project:locomo/{conv.name}"
            ingest(mem, conv, scope, "turns")
            filt = MemoryFilter(scopes=visible_scopes(scope))
            for n, q in enumerate([q for q in conv.questions if q.evidence]):
                short = RecallQuery(q.text, filt, 10, cut=False)
                runs = [
                    (shipped, partial(retrieve, ctx, short)),
                    (new, partial(learned, ctx, q.text, filt)),
                ]
                for times, run in runs if n % 2 == 0 else runs[::-1]:
                    object.__setattr__(ctx, "_queries", Lru(QUERY_CACHE_SIZE))
                    start = time.perf_counter()
                    run()
                    times.append(time.perf_counter() - start)
    a, b = 1000 * statistics.median(shipped), 1000 * statistics.median(new)
    print(
        f"{len(shipped)} questions: shipped median {a:.1f} ms, "
        f"learned path {b:.1f} ms, x{b / a:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("extract")
    ex.add_argument("--data", type=Path, required=True)
    ex.add_argument("--mode", default="turns")
    ex.add_argument("--out", type=Path, required=True)
    ft = sub.add_parser("fit")
    ft.add_argument("features", type=Path)
    ft.add_argument("--kinds", default="ranknet,pointwise")
    ft.add_argument("--drop", default="", help="features to leave out, comma-separated")
    la = sub.add_parser("latency")
    la.add_argument("--data", type=Path, required=True)
    la.add_argument("--conversations", default="43,26")
    args = parser.parse_args()
    if args.command == "extract":
        extract(args.data, args.mode, args.out)
    elif args.command == "latency":
        latency(args.data, tuple(args.conversations.split(",")))
    else:
        fit(args.features, tuple(args.kinds.split(",")), tuple(filter(None, args.drop.split(","))))


if __name__ == "__main__":
    main()
