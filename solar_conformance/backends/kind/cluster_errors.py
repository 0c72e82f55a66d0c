"""The error of a kind cluster that could not be created or used."""


class KindClusterError(Exception):
    """A kind cluster could not be created or used; the message carries the last state seen."""
