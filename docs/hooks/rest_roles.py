"""Griffe extension for the API reference: the docstrings' reST bits as Markdown.

The docstrings are prose with Sphinx roles (``:func:`~.rnea.rnea```) and literal
blocks introduced by ``::``; mkdocstrings renders Markdown. A role becomes inline
code of its target's last name (``~``) or its written name; a paragraph's closing
``::`` becomes ``:`` (the indented block after it is already a Markdown code block).
A dataclass field's ``default_factory=lambda: X`` shows as the default ``X``.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Attribute, ExprCall, ExprKeyword, ExprLambda, Extension, Object

ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|obj|exc|const):`([^`]+)`")
LITERAL = re.compile(r"(\S)::$", re.M)


def _role(match: re.Match[str]) -> str:
    text = match.group(1)
    named = re.fullmatch(r"(.+?)\s*<[^>]+>", text)
    if named:
        return f"`{named.group(1)}`"
    if text.startswith("~"):
        text = text.lstrip("~.").rsplit(".", 1)[-1]
    return f"`{text.lstrip('.')}`"


def markdown(text: str) -> str:
    """``text`` with its Sphinx roles as inline code and ``::`` markers as ``:``."""
    return LITERAL.sub(r"\1:", ROLE.sub(_role, text))


class RestRoles(Extension):
    """Rewrite every loaded object's docstring before mkdocstrings parses it."""

    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)

    def on_attribute_instance(self, *, attr: Attribute, **kwargs: Any) -> None:
        """``field(default_factory=lambda: X)`` reads as ``field(default=X)``, so the
        dataclass signature shows ``X`` rather than ``(lambda: X)()``."""
        value = attr.value
        if isinstance(value, ExprCall) and str(value.function) in {"field", "dataclasses.field"}:
            for k, argument in enumerate(value.arguments):
                if (isinstance(argument, ExprKeyword) and argument.name == "default_factory"
                        and isinstance(argument.value, ExprLambda)):
                    value.arguments[k] = ExprKeyword("default", argument.value.body,
                                                     argument.function)
