"""``acpwire bench``: acpwire against the codecs and reducers in use today (``harness``), the
baselines it times (``baselines``) and the workloads it reduces (``workloads``)."""
