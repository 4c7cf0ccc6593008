"""Schema post-processing for drf-spectacular."""

from __future__ import annotations

from typing import Any


def positive_path_ids(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Ids in paths are positive integers: the `<int:...>` URL converter matches nothing
    else, so a negative id never reaches the API (and would get Django's HTML 404)."""
    for path in result.get("paths", {}).values():
        for operation in path.values():
            for param in operation.get("parameters", []) if isinstance(operation, dict) else []:
                if param.get("in") == "path" and param.get("schema", {}).get("type") == "integer":
                    param["schema"]["minimum"] = 0
    return result
