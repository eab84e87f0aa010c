"""Modules that were renamed, importable under their old names.

``qafast.compare`` became ``qafast.comparison``, so that no module has the name of a function
the package exports (``qafast.compare``). Objects pickled before name their class by the old
module (``qafast.compare.Comparison``), and the docs showed ``from qafast.compare import
Comparison``: both still work, with a DeprecationWarning.

Importing a module binds it in its package under its name, in place of what was there, and
here that is the function ``qafast.compare``: so the old name is also callable, as that
function, and ``qafast.compare(...)`` keeps working after an old pickle is loaded.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import types
import warnings
from typing import Any


class RenamedModule(types.ModuleType):
    """A module's old name: its attributes are the new module's, and calling it calls the
    new module's function of the old name."""

    def __init__(self, name: str, new_name: str) -> None:
        super().__init__(name)
        self._new_name = new_name

    def _new_module(self) -> types.ModuleType:
        return importlib.import_module(self._new_name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._new_module(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._new_module())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._new_module(), self.__name__.rpartition(".")[2])(*args, **kwargs)


class _RenamedModuleLoader(importlib.abc.Loader):
    def __init__(self, new_name: str) -> None:
        self.new_name = new_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        # stacklevel 2: the import or the pickle load (warnings skips the import system)
        warnings.warn(f"{spec.name} is now {self.new_name}: import that (a pickle naming "
                      f"{spec.name} still loads, and is saved naming {self.new_name})",
                      DeprecationWarning, stacklevel=2)
        return RenamedModule(spec.name, self.new_name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def renamed_module_spec(name: str, new_name: str) -> importlib.machinery.ModuleSpec:
    return importlib.machinery.ModuleSpec(name, _RenamedModuleLoader(new_name))
