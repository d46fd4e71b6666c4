"""The benchmark workloads now live in :mod:`acpwire.cli.bench.workloads`; this path stays."""
