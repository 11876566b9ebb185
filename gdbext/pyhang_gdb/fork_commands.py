"""fork-hazards: what a fork child inherited that can never be released."""


def hazards(target, view, report):
    """The report's `fork_hazards` list."""
    return []


def register():
    pass
