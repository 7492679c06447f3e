"""The papers' evaluation suites. `evaluate(model, suites)` (`sentaug.evaluate.api`) runs them from Python on a
model folder, a hub id or any object with `encode(list[str]) -> array`."""


def __getattr__(name):       # imported on first use: `sentaug evaluate --help` does not load numpy for it
    if name == "evaluate":
        from .api import evaluate

        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
