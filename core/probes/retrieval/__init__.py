"""Retrieval-level probes.

The suite (suite, suite_checks, suite_files, convert), the suite run (run), corpus mode (corpus),
triples and BEIR (triples, beir), metrics and tables, and mitigations (mitigations, specs, rescoring, guard, reranker).
"""
