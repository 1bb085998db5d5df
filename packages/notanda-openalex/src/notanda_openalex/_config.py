"""Loading the notanda core configuration without ever repeating a value from it.

Kept apart from the client so that a caller (the MCP server at start-up) can
check the configuration without importing httpx.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from harvester.config import Config
from harvester.errors import ConfigurationError as CoreConfigurationError

from ._errors import ConfigProblem, ConfigurationError

__all__ = ["load_core_config"]

_CORE_VALUE_PROBLEMS = re.compile(
    r"[\w.]+ (?:may not be null|must be a boolean|must be an integer|must be a number)"
)


def _core_problem(message: str) -> ConfigProblem:
    # The core's messages may quote a value or a path; they are only matched
    # against fixed prefixes here, never repeated.
    if message.startswith("configuration file not found"):
        return ConfigProblem.FILE_NOT_FOUND
    if message.startswith("invalid JSON in configuration file"):
        return ConfigProblem.INVALID_JSON
    if message.startswith("configuration file ") and message.endswith("must contain a JSON object"):
        return ConfigProblem.NOT_AN_OBJECT
    if message.startswith("unknown configuration key"):
        return ConfigProblem.UNKNOWN_KEY
    if message.startswith("configuration section ") and message.endswith("must be an object"):
        return ConfigProblem.SECTION_NOT_AN_OBJECT
    if _CORE_VALUE_PROBLEMS.match(message):
        return ConfigProblem.INVALID_VALUE
    return ConfigProblem.INVALID


def load_core_config(env: Mapping[str, str] | None = None) -> Any:
    """Load ``harvester.config.Config`` from *env* (``os.environ`` by default).

    Reads the ``HARVESTER_CONFIG`` file and the ``HARVESTER_*`` variables.

    Raises:
        ConfigurationError: The configuration could not be read or is invalid.
            The message is one fixed line with no value, path or secret in it.
    """
    environment = dict(os.environ) if env is None else {str(k): str(v) for k, v in env.items()}
    problem: ConfigProblem
    try:
        return Config.load(env=environment)
    except CoreConfigurationError as exc:
        problem = _core_problem(str(exc))
    except (OSError, UnicodeDecodeError):
        problem = ConfigProblem.FILE_NOT_READABLE
    except (ValueError, TypeError):
        problem = ConfigProblem.INVALID
    # Raised outside the handlers so the core's exception (whose text may
    # quote a value) is neither chained nor attached as context.
    raise ConfigurationError(problem)
