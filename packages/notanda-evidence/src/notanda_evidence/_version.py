"""The single version of this distribution, shared by all three Notanda packages."""

__version__ = "0.2.0b1"
