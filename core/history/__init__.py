"""Run history: every scoring run from the CLI and the app, kept in a DuckDB file in the cache folder, and diffs between runs."""
