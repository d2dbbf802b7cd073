"""Hook-based probes of trained models (issue: probes). Registry of probe modules by name."""

PROBES: dict = {}


def available() -> list[str]:
    return sorted(PROBES)
