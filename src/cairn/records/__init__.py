"""The records storage reads and writes, one module per feature's tables.

They sit below the store (`cairn.store.base` and every backend import them) and beside
`cairn.models`, so the store never imports the features it serves; the features import their
stored records from here and keep only what their tools return.
"""
