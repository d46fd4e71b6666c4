"""The ``acpwire`` command-line tools, apart from the codec: the argparse entry (``main``), one
module per subcommand, and what they share (``render``, ``traces``, ``output``)."""
