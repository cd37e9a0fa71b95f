"""Every exported function and class has its own docstring: the API pages show it under the signature (a class
without one would show pydantic's, `BaseModel`'s or the dataclass's generated signature instead)."""
import dataclasses, importlib, inspect, pkgutil
import personalwab

def _own_doc(obj) -> str | None:
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        if doc and dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("): return None   # generated signature
        return doc
    return getattr(obj, "__doc__", None)

def missing_docstrings() -> list[str]:
    out = []
    for m in pkgutil.walk_packages(personalwab.__path__, "personalwab."):
        if m.name.rpartition(".")[2].startswith("_"): continue
        mod = importlib.import_module(m.name)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name, None)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or getattr(obj, "__module__", "") != mod.__name__: continue
            if not (_own_doc(obj) or "").strip(): out.append(f"{m.name}.{name}")
    return out

def test_every_exported_function_and_class_has_its_own_docstring():
    missing = missing_docstrings()
    assert not missing, f"{len(missing)} exported names without their own docstring: {missing}"
