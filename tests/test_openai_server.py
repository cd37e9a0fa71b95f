"""The `openai` backend against REAL OpenAI-compatible HTTP servers on 127.0.0.1.

Each server is a separate process (`personalwab.llm.openai.serve_forever`: FastAPI + uvicorn)
serving the project's own `hf` backend — the tiny in-process Llama, or the real SmolLM2 — so the
whole path is real: the official `openai` SDK, HTTP, JSON tool calls, and a local model. Faulty
servers (429/500 before succeeding, always 500, hanging) check retries, backoff and the hard
timeout. Nothing here is mocked. (The fault servers run in-process — uvicorn in a thread, still real
HTTP on 127.0.0.1 — because starting a model process per fault costs ~10 s on CI.)
"""
import json, os, socket, subprocess, sys, time, urllib.request
from contextlib import contextmanager
import pytest
from personalwab.llm.base import get_llm, usage_summary
from personalwab.llm.cache import ResponseCache
from personalwab.llm.openai import serve, Faults

TOOLS = [{"type": "function", "function": {"name": "search_product_by_query", "description": "Search the store's products with a text query.",
          "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "what to search for"}}, "required": ["query"]}}},
         {"type": "function", "function": {"name": "stop", "description": "End the session.", "parameters": {"type": "object", "properties": {}}}}]
ASK = [{"role": "user", "content": "Find me a waterproof hiking backpack."}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


@contextmanager
def server(spec="tiny", faults=None, timeout=180):
    "Start `serve_forever(spec)` in its own process on a free 127.0.0.1 port; yield its base URL."
    port = _free_port()
    code = ("import sys, json; from personalwab.llm.openai import serve_forever; "
            "serve_forever(sys.argv[1], port=int(sys.argv[2]), faults=json.loads(sys.argv[3]), log_level='warning', cache=False)")
    p = subprocess.Popen([sys.executable, "-c", code, spec, str(port), json.dumps(faults)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        t0 = time.monotonic()
        while True:
            if p.poll() is not None: raise RuntimeError(f"server exited: {p.stdout.read()[-3000:]}")
            try:
                urllib.request.urlopen(url + "/models", timeout=1).read(); break
            except OSError:
                if time.monotonic() - t0 > timeout: raise RuntimeError(f"server on {url} did not come up")
                time.sleep(0.2)
        yield url
    finally:
        p.terminate()
        try: p.wait(10)
        except subprocess.TimeoutExpired: p.kill(); p.wait()


@pytest.fixture(scope="module")
def tiny_url():
    with server("tiny") as url: yield url


def test_models_endpoint(tiny_url):
    from openai import OpenAI
    ids = [m.id for m in OpenAI(base_url=tiny_url, api_key="x").models.list().data]
    assert ids == ["tiny-llama"]


def test_n_and_usage(tiny_url):
    llm = get_llm(f"openai:tiny-llama@{tiny_url}", cache=False)
    r = llm.chat(ASK, n=4, temperature=1.0, max_tokens=10, role="user_simulator")
    assert len(r) == 4 and all(c.ok for c in r)
    local = get_llm("tiny", cache=False).chat(ASK, n=4, temperature=1.0, max_tokens=10)
    assert [c.text for c in r] == [c.text for c in local]  # same model, same seed, over HTTP
    s = usage_summary(llm.usage)["user_simulator"]
    assert s["calls"] == 1 and s["completions"] == 4 and s["prompt_tokens"] > 0 and s["completion_tokens"] > 0


def test_native_tool_calls(tiny_url):
    llm = get_llm(f"openai:tiny-llama@{tiny_url}", cache=False)
    r = llm.chat(ASK, tools=TOOLS, constrained=True, n=3, temperature=1.0, max_tokens=40)
    assert all(c.ok and c.tool_call and c.tool_call.name in ("search_product_by_query", "stop") for c in r), r
    conv = ASK + [{"role": "assistant", "tool_calls": [{"function": {"name": "search_product_by_query", "arguments": {"query": "backpack"}}}]},
                  {"role": "tool", "content": "Product 1: Acme waterproof backpack"}]
    assert llm.chat(conv, tools=TOOLS, max_tokens=10)[0].ok


def test_cache_hit_makes_no_request(tiny_url, tmp_path):
    llm = get_llm(f"openai:tiny-llama@{tiny_url}", cache=ResponseCache(tmp_path))
    a = llm.chat(ASK, n=2, temperature=1.0, max_tokens=10, seed=5)
    b = llm.chat(ASK, n=2, temperature=1.0, max_tokens=10, seed=5)
    assert llm.attempts == 1 and llm.model_calls == 1
    assert [c.text for c in a] == [c.text for c in b] and all(c.usage.cached for c in b) and not any(c.usage.cached for c in a)
    llm.chat(ASK, n=2, temperature=1.0, max_tokens=10, seed=6)  # another trial: a new request
    assert llm.attempts == 2


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retries_then_success(status):
    "429/5xx twice, then an answer: the call succeeds on the third attempt."
    with serve("tiny", Faults(fail_first=2, status=status), cache=False) as srv:
        llm = get_llm(f"openai:tiny-llama@{srv.url}", cache=False, max_retries=4, backoff_base=0.05)
        r = llm.chat(ASK, max_tokens=8)
        assert r[0].ok and llm.attempts == 3


def test_retries_exhausted_is_an_error_value(tmp_path):
    with serve("tiny", Faults(fail_first=1000, status=500), cache=False) as srv:
        cache = ResponseCache(tmp_path)
        llm = get_llm(f"openai:tiny-llama@{srv.url}", cache=cache, max_retries=2, backoff_base=0.05)
        r = llm.chat(ASK, n=2, max_tokens=8)
        assert [c.ok for c in r] == [False, False] and "500" in r[0].error and llm.attempts == 3
        assert len(cache) == 0  # failures are never cached


def test_hanging_server_times_out():
    with server("tiny", {"hang_s": 60}) as url:  # its own process: the hang must not block this one
        llm = get_llm(f"openai:tiny-llama@{url}", cache=False, timeout=1.0, max_retries=1, backoff_base=0.01)
        t0 = time.monotonic()
        r = llm.chat(ASK, max_tokens=8)
        dt = time.monotonic() - t0
        assert not r[0].ok and "Timeout" in r[0].error and llm.attempts == 2
        assert dt < 15, dt  # bounded by timeout x attempts (+ slack for a loaded CI machine), not by the 60 s hang


@pytest.mark.slow
def test_smollm2_over_http():
    "The real SmolLM2 served by the hf backend, used through the official SDK: same agent-facing API."
    with server("smollm2", timeout=600) as url:
        llm = get_llm(f"openai:smollm2-135m-instruct@{url}", cache=False, timeout=300)
        r = llm.chat([{"role": "user", "content": "What is the capital of France?"}], max_tokens=16)
        assert r[0].ok and "Paris" in r[0].text, r[0]
        t = llm.chat([{"role": "system", "content": "You are a shopping assistant. Use the tools."}] + ASK,
                     tools=TOOLS[:1], constrained=True, max_tokens=32)
        assert t[0].ok and t[0].tool_call and t[0].tool_call.name == "search_product_by_query", t[0]
        assert isinstance(t[0].tool_call.arguments.get("query"), str)
