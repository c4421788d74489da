"""The sasl.jaas.config text, read the way Kafka's JaasConfig reads it (Java's StreamTokenizer); pure, no I/O."""

from __future__ import annotations

import re


class JaasError(ValueError):
    """sasl.jaas.config cannot be read; the message says why and never quotes a value."""


_FLAGS = ("required", "requisite", "sufficient", "optional")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_JAAS_WORD = re.compile(r"[A-Za-z_$\u00a0-\U0010ffff][A-Za-z0-9_$.\-\u00a0-\U0010ffff]*")
_JAAS_NUMBER = re.compile(r"-?[0-9.][0-9.]*")


def _jaas_tokens(text: str) -> list[tuple[str, str]]:
    """Tokens as Java's StreamTokenizer makes them in JaasConfig: ("word" | "quoted" | "other", text).

    Words start with a letter, '_', '$' or a character from U+00A0 and go on with those, digits, '.' and '-'.
    Anything else unquoted (a number, '/', '@') is not a value for Java either.
    """
    tokens, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif c == "/":  # //, /* */ and, StreamTokenizer's default, a lone / start comments
            end = text.find("*/", i + 2) + 2 if text.startswith("/*", i) else text.find("\n", i) + 1
            i = n if end <= 1 else end
        elif c in "\"'":
            value, i = _jaas_quoted(text, i)
            tokens.append(("quoted", value))
        elif match := _JAAS_WORD.match(text, i) or _JAAS_NUMBER.match(text, i):
            tokens.append(("word" if match.re is _JAAS_WORD else "other", match.group()))
            i = match.end()
        else:
            tokens.append(("other", c))
            i += 1
    return tokens


def _jaas_quoted(text: str, start: int) -> tuple[str, int]:
    """A quoted value with StreamTokenizer's escapes: \\n and friends, octal \\ooo, and \\x for any other x."""
    quote, out, i = text[start], [], start + 1
    while i < len(text) and text[i] != quote:
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            i += 1
            octal = re.compile(r"[0-7]{1,3}" if text[i] <= "3" else r"[0-7]{1,2}").match(text, i)
            if octal:
                out.append(chr(int(octal.group(), 8)))
                i = octal.end()
                continue
            c = _ESCAPES.get(text[i], text[i])
        out.append(c)
        i += 1
    if i >= len(text):
        raise JaasError(f"a quoted value starting at character {start + 1} has no closing quote")
    return "".join(out), i + 1


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """The login module of a client's sasl.jaas.config and its options; raises JaasError, naming no value."""
    tokens, pos, entries = _jaas_tokens(text), 0, []

    def at(i: int) -> tuple[str, str]:
        return tokens[i] if i < len(tokens) else ("end", "")

    while pos < len(tokens):
        module, flag = at(pos), at(pos + 1)
        if module[0] != "word" or flag[0] != "word" or flag[1].lower() not in _FLAGS:
            raise JaasError('must read: <LoginModule class> required key="value" ...;')
        pos, options, last = pos + 2, {}, "the control flag"
        while at(pos) != ("other", ";"):
            key, equals, value = at(pos), at(pos + 1), at(pos + 2)
            if key[0] == "end":
                raise JaasError("the login module entry must end with ';'")
            if key[0] not in ("word", "quoted") or equals != ("other", "=") or value[0] not in ("word", "quoted"):
                raise JaasError(f"expected key=value after {last}; quote values holding characters other than "
                             "letters, digits, '.', '-', '_' and '$'")
            options[key[1]] = value[1]
            pos, last = pos + 3, f"option {key[1]}"
        entries.append((module[1], options))
        pos += 1
    if len(entries) != 1:
        raise JaasError(f"must hold exactly one login module, not {len(entries)}")
    return entries[0]
