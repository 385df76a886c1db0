"""sweep: add one model to BFCL's registry in this Python process.

sweep ab run writes this file, unchanged, into a directory it puts first on
the PYTHONPATH of the bfcl processes of one (arm, replicate) run. Every value
comes from the environment; no text from it is ever run:

  SWEEP_BFCL_REGISTRY_NAME  the registry key that bfcl --model takes (no "_")
  SWEEP_BFCL_API_MODEL      the model name sent to the server (default: the key)

When bfcl_eval.constants.model_config has been imported, the key is added to
its MODEL_CONFIG_MAPPING (the dict bfcl's CLI, generator and checkers read)
as a ModelConfig with OpenAICompletionsHandler, is_fc_model=True and
underscore_to_dot=True (that handler sends "." in tool names as "_"; with
False the checker fails every dotted-name case). Written for bfcl-eval
2026.3.23 (gorilla 6ea57973); it checks the ModelConfig fields it needs.

Without SWEEP_BFCL_REGISTRY_NAME nothing is registered. The sitecustomize
this file shadows on sys.path, if any, still runs. A problem is written to
stderr and leaves the key unregistered, so "bfcl models", which sweep runs to
verify the entry, does not list it and the run stops there.
"""

import os
import sys

_TARGET = "bfcl_eval.constants.model_config"
_NAME_ENV = "SWEEP_BFCL_REGISTRY_NAME"
_API_MODEL_ENV = "SWEEP_BFCL_API_MODEL"
_NEEDED = (
    "model_name",
    "display_name",
    "url",
    "org",
    "license",
    "model_handler",
    "is_fc_model",
    "underscore_to_dot",
)


def _warn(message):
    sys.stderr.write("sweep sitecustomize: " + message + "\n")


def _register(module):
    name = os.environ.get(_NAME_ENV, "")
    api_model = os.environ.get(_API_MODEL_ENV, "") or name
    if "_" in name:
        _warn(
            "not registered: %s holds a \"_\"; bfcl maps result directories "
            "back to registry names with \"_\" -> \"/\"" % _NAME_ENV
        )
        return
    try:
        import dataclasses

        from bfcl_eval.model_handler.api_inference.openai_completion import (
            OpenAICompletionsHandler,
        )

        config_type = module.ModelConfig
        mapping = module.MODEL_CONFIG_MAPPING
        fields = set(f.name for f in dataclasses.fields(config_type))
    except Exception as exc:  # reported, and bfcl models shows the entry missing
        _warn("not registered: %s: %s" % (type(exc).__name__, exc))
        return
    missing = [f for f in _NEEDED if f not in fields]
    if missing:
        _warn(
            "not registered: bfcl_eval's ModelConfig has no field(s) %s; "
            "this file is written for bfcl-eval 2026.3.23" % ", ".join(missing)
        )
        return
    values = {
        "model_name": api_model,
        "display_name": name + " (FC)",
        "url": "",
        "org": name.split("/", 1)[0] if "/" in name else "",
        "license": "",
        "model_handler": OpenAICompletionsHandler,
        "is_fc_model": True,
        "underscore_to_dot": True,
    }
    for optional in ("input_price", "output_price"):
        if optional in fields:
            values[optional] = None
    mapping[name] = config_type(**values)


class _Loader(object):
    """Runs the real loader, then registers the model."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _register(module)

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _Finder(object):
    """Wraps the loader of bfcl_eval.constants.model_config, once."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                _warn("not registered: cannot wrap the loader of " + _TARGET)
                return spec
            spec.loader = _Loader(spec.loader)
            return spec
        return None


def _chain():
    """Runs the sitecustomize this file shadows, if any (a venv's, a distro's)."""
    try:
        import importlib.machinery
        import importlib.util

        here = os.path.dirname(os.path.abspath(__file__))
        rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
        if spec is None or spec.loader is None:
            return
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as exc:
        _warn("the shadowed sitecustomize failed: %s: %s" % (type(exc).__name__, exc))


if os.environ.get(_NAME_ENV):
    if _TARGET in sys.modules:
        _register(sys.modules[_TARGET])
    else:
        sys.meta_path.insert(0, _Finder())
_chain()
