from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.ranking.lexical import (
    BM25F,
    AnalysedDoc,
    CorpusStats,
    LexicalIndex,
    analyze,
    fold,
    query_terms,
    stem,
    tokenize,
)


def index(*texts: str) -> LexicalIndex:
    return LexicalIndex(AnalysedDoc.from_text(f"m{i}", content=t) for i, t in enumerate(texts))


def test_fold_strips_accents_case_and_punctuation() -> None:
    assert fold("Préproduction, ÉTÉ!") == "preproduction  ete "
    assert tokenize("Don't-push: to MAIN.") == ["don", "t", "push", "to", "main"]
    assert tokenize("ﬁle straße") == ["file", "strasse"]


def test_stem_reduces_inflections() -> None:
    assert stem("refused") == stem("refusal") == stem("refusing")
    assert analyze("Running tests") == ["run", "test"]


def test_refused_finds_refusal() -> None:
    idx = index("The refusal of the deploy was logged", "Deploy succeeded quietly")
    assert set(idx.search(query_terms("why was it refused"))) == {"m0"}


def test_preproduction_finds_accented_form() -> None:
    idx = index("Le serveur de préproduction est lent", "The staging server is fast")
    assert set(idx.search(query_terms("preproduction"))) == {"m0"}


def test_case_and_punctuation_do_not_matter() -> None:
    idx = index("Use pytest-xdist for PARALLEL runs.", "Nothing to see")
    assert set(idx.search(query_terms("Pytest XDIST parallel?"))) == {"m0"}


def test_rarer_word_weighs_more() -> None:
    # "database" is in every memory, "sqlite" in one: a memory with the rare word outranks
    # a memory repeating the common one.
    idx = index(
        "database sqlite",
        "database database postgres",
        "database notes",
        "database backups",
    )
    scores = idx.search(query_terms("sqlite database"))
    assert scores["m0"] > scores["m1"]
    assert idx.scorer.idf("sqlite") > idx.scorer.idf("databas")


def test_stopwords_are_dropped_from_queries_unless_nothing_else_is_left() -> None:
    assert query_terms("What is the capital of Peru?") == ["capit", "peru"]
    assert query_terms("who is it") == ["who", "is", "it"]
    assert query_terms("tests test testing") == ["test"]


def test_content_outweighs_reason() -> None:
    docs = [
        AnalysedDoc.from_text("a", content="cache layer", reason="flaky"),
        AnalysedDoc.from_text("b", content="flaky network tests", reason="cache"),
        AnalysedDoc.from_text("c", content="other things"),
    ]
    idx = LexicalIndex(docs)
    scores = idx.search(query_terms("flaky"))
    assert scores["b"] > scores["a"] > 0


def test_field_weights_order_content_tags_source_reason() -> None:
    docs = [
        AnalysedDoc.from_text(f, **{f: "widget"})
        for f in ("content", "tags", "source_ref", "reason")
    ]
    docs.append(AnalysedDoc.from_text("x", content="unrelated"))
    scores = LexicalIndex(docs).search(["widget"])
    assert scores["content"] > scores["tags"] > scores["source_ref"] > scores["reason"]


def test_scorer_uses_stats_handed_in_from_outside() -> None:
    doc = AnalysedDoc.from_text("m", content="alpha beta")
    rare = BM25F(
        CorpusStats(doc_count=1000, df={"alpha": 1, "beta": 900}, avg_field_len={"content": 2.0})
    )
    assert rare.score(["alpha"], doc) > rare.score(["beta"], doc) > 0
    assert rare.score(["gamma"], doc) == 0.0


def test_coverage_is_the_share_of_query_rarity_matched() -> None:
    docs = [
        AnalysedDoc.from_text(f"m{i}", content=t)
        for i, t in enumerate(["kubernetes ingress", "ingress", "x y"])
    ]
    scorer = BM25F(CorpusStats.from_docs(docs))
    terms = query_terms("kubernetes ingress")
    assert scorer.coverage(terms, docs[0]) == 1.0
    assert 0.0 < scorer.coverage(terms, docs[1]) < 1.0
    assert scorer.coverage(terms, docs[2]) == 0.0


def test_corpus_stats_from_docs() -> None:
    docs = [
        AnalysedDoc.from_text("a", content="one two two"),
        AnalysedDoc.from_text("b", content="two"),
    ]
    stats = CorpusStats.from_docs(docs)
    assert stats.doc_count == 2
    assert stats.df["two"] == 2 and stats.df["one"] == 1
    assert stats.avg_field_len["content"] == 2.0


@given(st.text())
def test_fold_is_idempotent_and_tokens_are_clean(text: str) -> None:
    once = fold(text)
    assert fold(once) == once
    for word in tokenize(text):
        assert word and all(ch.isalnum() for ch in word)


def test_index_search_agrees_with_scoring_each_document() -> None:
    docs = [
        AnalysedDoc.from_text("a", content="flaky tests on ci", tags="ci", reason="flaky runner"),
        AnalysedDoc.from_text("b", content="the ci runner is slow", context="flaky tests again"),
        AnalysedDoc.from_text("c", content="nothing relevant here"),
    ]
    idx = LexicalIndex(docs)
    terms = query_terms("flaky CI runner")
    expected = {d.id: idx.scorer.score(terms, d) for d in docs if idx.scorer.score(terms, d) > 0}
    got = idx.search(terms)
    assert set(got) == set(expected) == {"a", "b"}
    for key, value in expected.items():
        assert got[key] == pytest.approx(value)
