"""Retrieval-level probes: the suite (suite), metrics, tables, the run and corpus mode (run), mitigations (mitigations, guard, reranker)."""
