"""The usage error of the parameters, raised by every check of a flag or a combination."""


class ParamsError(ValueError):
    """A parameter value or combination of parameters is invalid (usage error, exit status 2)."""
