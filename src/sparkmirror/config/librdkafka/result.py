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
    credentials: dict[str, str] = field(default_factory=dict)  # problem -> the password key that would fix it

    def get(self, key: str, strip: bool = True) -> str | None:
        """The value of a security key (marking it used); None when absent or empty."""
        if key not in self.java:
            return None
        self.consumed.add(key)
        value = self.java[key].strip() if strip else self.java[key]
        return value if value.strip() else None

    def problem(self, key: str, text: str, password_key: str | None = None) -> None:
        """Note a problem with `key`; `password_key` when it is a password that does not open a key or store
        (a credentials problem, reported as a refused login is)."""
        problem = f"{self.describe(key)}: {text}"
        self.problems.append(problem)
        if password_key is not None:
            self.credentials[problem] = password_key
