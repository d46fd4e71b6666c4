"""Deterministic workload generators for benchmarks (no I/O, stdlib only)."""
