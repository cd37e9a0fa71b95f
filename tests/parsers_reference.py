"""The parsers of model output as they were before they were made linear (issue 46, item 5), kept as the reference the
new ones must equal on every input: copied from the library at 212c9cc, with only the definitions that changed (the
helpers they call are the library's, unchanged). Quadratic on some inputs: feed them short ones."""
import json, re
from typing import Any
from personalwab.core.encoding import encodable
from personalwab.llm.base import ToolCall
from personalwab.agents.memory import _ASIN
from personalwab.llm.toolcalls import MAX_CALL_CHARS, MAX_JSON_DEPTH, _as_call, _balanced_spans, json_depth, loads_bounded, tool_names
from personalwab.web.actions import MAX_OUTPUT, PageAction, _CALL, _call_span, _from_call, _from_json, _from_step, make_action


def parse_action(output: Any) -> tuple[PageAction | None, str | None]:
    "The page action in a model's `output` (text, bytes, a dict or a `PageAction`), or `(None, the reason)`; never raises."
    try:
        if isinstance(output, PageAction): return make_action(output.kind, output.node, output.text or None, output.submit)
        if isinstance(output, dict): return _from_json(output)
        if isinstance(output, (bytes, bytearray)):
            try: output = bytes(output).decode("utf-8")
            except UnicodeDecodeError as e: return None, f"the output is not UTF-8 (byte {e.start})"
        if not isinstance(output, str): return None, f"cannot read an action from a {type(output).__name__}"
        text = output[-MAX_OUTPUT:]
        s = text.strip()
        if s.startswith("{"):
            try: return _from_json(json.loads(s))
            except (ValueError, RecursionError): pass
        if (step := _from_step(text)) is not None: return step
        for m in reversed(list(_CALL.finditer(text))):
            if (src := _call_span(text, m.start())) is not None: return _from_call(src)
        return None, "no action found; write one of click(node), type(node, \"text\"), select(node, \"option\"), go_back(), message(\"text\")"
    except Exception as e:   # whatever the output, a step never crashes the run
        return None, f"cannot read an action ({type(e).__name__})"


_FENCE = re.compile(r"```(?:json|JSON|tool_call|python)?\s*(.*?)```", re.S)

def parse_tool_call(text: str, tools: list[dict] | None = None, strict: bool = True) -> tuple[ToolCall | None, str | None]:
    "Find a function call in `text`: (ToolCall, None), (None, None) for plain text, or (None, error); never raises."
    text = encodable(text if isinstance(text, str) else "")
    long = len(text) > MAX_CALL_CHARS
    text = text[:MAX_CALL_CHARS]                       # bounded work: see `loads_bounded`
    names = tool_names(tools)
    cands = _FENCE.findall(text) + _balanced_spans(text)
    unknown = deep = None
    for c in cands:
        c = c.strip()
        if json_depth(c) > MAX_JSON_DEPTH: deep = deep or c; continue
        call = _as_call(loads_bounded(c))
        if call is None: continue
        if strict and names and call[0] not in names:
            unknown = unknown or call[0]; continue
        return ToolCall(call[0], encodable(call[1]), raw=c), None
    if unknown: return None, f"unknown function {unknown!r}; available: {names}"
    if deep: return None, f"unparseable tool call: JSON nested deeper than {MAX_JSON_DEPTH} levels: {deep[:80]!r}"
    if long and ("{" in text or "[" in text): return None, f"unparseable tool call: a reply longer than {MAX_CALL_CHARS:,} characters: {text[:80]!r}"
    looks_like_call = ("{" in text and re.search(r"""["']?(name|function|arguments)["']?\s*:""", text)) or \
                      any(re.search(rf"\b{re.escape(n)}\s*\(", text) for n in names)
    if looks_like_call: return None, f"unparseable tool call: {text[:200]!r}"
    return None, None


def parse_profile_update(text: str) -> dict:
    "The `{'like', 'dislike', 'expect'}` lists found in an LLM answer (empty lists if none)."
    import json_repair
    m = re.search(r"\{.*\}", text or "", re.S)
    try: d = json_repair.loads(m.group(0)) if m else {}
    except Exception: d = {}
    d = d if isinstance(d, dict) else {}
    lst = lambda v: [str(x) for x in v] if isinstance(v, list) else []
    return {"like": [a for a in lst(d.get("like")) if _ASIN.match(a)],
            "dislike": [a for a in lst(d.get("dislike")) if _ASIN.match(a)],
            "expect": [x for x in lst(d.get("expect")) if x.strip()][:30]}
