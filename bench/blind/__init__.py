"""The blind corpus: public logs whose truth was written before any analysis (manifest_*.tsv, corpus.py)."""
