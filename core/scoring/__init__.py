"""Scoring: the runner that turns pairs into a tidy long results table, and the tables built on it."""
