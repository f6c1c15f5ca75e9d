"""The compiled core (tf_gulp._core) for the FFRecord readers and writers, with a clear error when it
has not been built."""

try:
    from tf_gulp import _core
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"tf_gulp's C++ module tf_gulp._core cannot be imported ({e}); build it from the source "
        "checkout with: pip install --no-build-isolation -e .  (or make build); see docs/building.md"
    ) from e

DataLossError = _core.DataLossError

__all__ = ["DataLossError", "_core"]
