"""The benchmark baselines now live in :mod:`acpwire.cli.bench.baselines`; this path stays."""

from .cli.bench.baselines import DictReducer, MsgspecReducer, PyteTerminal, SdkDecoder, available

__all__ = ["DictReducer", "MsgspecReducer", "PyteTerminal", "SdkDecoder", "available"]
