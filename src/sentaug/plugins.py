"""Modules from outside the package that register things in one of sentaug's registries: augmentations
(`sentaug.augment.registry`) and a method's parts (`sentaug.parts`).

A registry's modules are imported in three ways (docs/extending.md): its own built-in modules, then every
installed plugin (a distribution declaring an entry point in the registry's group), then the modules the user
names (a config key, a `--module` flag). Whatever a module raises on import becomes a `PluginError` that names
the module, where it was named, and the plugin's own line that raised. While a module is imported, `origin`
says where it was named, so that a registration can record it (and a name registered twice can be reported
with both origins).
"""
from __future__ import annotations

import importlib
import traceback
from pathlib import Path

BUILT_IN = "sentaug"


class PluginError(ImportError):
    """A plugin module failed to import, or registered something wrong; the message names the module and where
    it was named."""


class PluginModules:
    """The modules that register into one registry: `what` names the registry's things in messages
    ("augmentation", "method part"), `group` is its entry-point group, `built_in` its own modules."""

    def __init__(self, what: str, group: str, built_in: tuple[str, ...] = ()):
        self.what, self.group, self.built_in = what, group, built_in
        self.loaded = False
        self._origins = [BUILT_IN]  # a stack: a plugin may import another

    @property
    def origin(self) -> str:
        """Where the module being imported now was named (BUILT_IN for sentaug's own)."""
        return self._origins[-1]

    def load(self) -> None:
        """The built-in modules, then every installed plugin (entry points of `group`), once."""
        if self.loaded:
            return
        from importlib.metadata import entry_points     # here: `sentaug --help` need not read installed packages

        self.loaded = True     # once, also when a plugin fails: the error is raised here, with its name
        for module in self.built_in:
            importlib.import_module(module)
        for ep in sorted(entry_points(group=self.group), key=lambda ep: ep.name):
            dist = f" of {ep.dist.name} {ep.dist.version}" if ep.dist is not None else ""
            origin = f"entry point '{ep.name} = {ep.value}'{dist}, group {self.group}"
            self.import_module(ep.value.split(":")[0], origin)

    def load_modules(self, modules, origin: str) -> None:
        """Import modules named by the user after the built-in ones and installed plugins, so that a name
        registered twice is reported with both registrations."""
        self.load()
        for module in modules or ():
            self.import_module(module, origin)

    def import_module(self, module: str, origin: str) -> None:
        """Import `module`; any failure is a PluginError naming it, its origin and the plugin's line that raised."""
        self._origins.append(origin)
        try:
            importlib.import_module(module)
        except Exception as e:   # noqa: BLE001 - whatever the plugin raises, the message must say which plugin
            raise PluginError(f"{self.what} plugin {module!r} ({origin}) failed to import: {type(e).__name__}: {e}"
                              f"{raised_at(e)}") from e
        finally:
            self._origins.pop()


def raised_at(error: Exception) -> str:
    """` (file, line N)`: the last line of the plugin's own code in `error`'s traceback (sentaug's registries
    and the import system left out); "" when there is none (a module that does not exist)."""
    package = Path(__file__).parent
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not f.filename.startswith("<")
              and "importlib" not in Path(f.filename).parts and not Path(f.filename).is_relative_to(package)]
    return f" ({frames[-1].filename}, line {frames[-1].lineno})" if frames else ""
