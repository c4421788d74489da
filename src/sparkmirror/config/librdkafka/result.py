"""What one translation of Java client settings collects; shared by translation, tls and sasl."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass
class Result:
    """What the translation collects: settings, consumed security keys and problems, each named via describe."""

    java: Mapping[str, str]
    describe: Callable[[str], str]
    settings: dict[str, str] = field(default_factory=dict)
    consumed: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)

    def get(self, key: str, strip: bool = True) -> str | None:
        """The value of a security key (marking it used); None when absent or empty."""
        if key not in self.java:
            return None
        self.consumed.add(key)
        value = self.java[key].strip() if strip else self.java[key]
        return value if value.strip() else None

    def problem(self, key: str, text: str) -> None:
        self.problems.append(f"{self.describe(key)}: {text}")
