"""placeholder"""


def add_parser(commands):
    return None
