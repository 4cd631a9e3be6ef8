"""A Griffe extension for the API reference: each package of ``analysis`` exports what its
``__init__.pyi`` re-exports, and docstrings' Sphinx roles read as code.

The packages build ``__all__`` at run time (``lazy_loader.attach_stub``), which a static reader
cannot see; the stubs list every public name as ``from ._module import name as name``. This
gives each package the ``__all__`` Python gives it, so its public names, and only those, are
documented. A role such as ``:func:`share``` is written as ``share``, in code."""

from __future__ import annotations

import importlib
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|data|meth|attr|mod|exc|obj|const):`~?([^`]+)`")


class LazyAll(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for module in [pkg, *self._submodules(pkg)]:
            names = getattr(importlib.import_module(module.path), "__all__", None)
            if names is not None:
                module.exports = list(names)

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)

    def _submodules(self, module: griffe.Module) -> list[griffe.Module]:
        found = []
        for member in module.modules.values():
            if not member.name.startswith("_"):
                found += [member, *self._submodules(member)]
        return found
