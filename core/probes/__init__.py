"""Probes beyond the papers: perturbations, invented words, calibrated thresholds."""
