"""Sessions: activate → recall → feedback → commit, the episodic trace, procedures, associations.

The `SessionTools` mixin (`cairn.sessions.tools`) puts these verbs on `cairn.Cairn`; the logic
lives in small modules beside it:

    ledger       open sessions, find them, refuse the wrong ones, record retrievals
    brief        what `activate` returns, within its budget
    branch       the minimal git branch brief (branch, recent commits)
    feedback     assessments of a retrieval's memories and procedures, and their tallies
    procedures   capture at commit, tallies and contributions, recall like memories
    commit       commit and end: the episode, the procedure, closing the session
    trace        pins, progress lines, `episodes` windows and the rolling `history`
    relations    associations between memories and the `associated` pathway of recall
    enrich       what recall adds around the ranked hits (provenance, evidence, procedures)
    typed        the seed-shaped remember: scalar or batch, never both

Importing this package imports nothing else, so `cairn.models` can use its records.
"""
