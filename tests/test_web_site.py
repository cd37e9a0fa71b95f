"""The shop renders every text escaped, logs page actions as function calls, and serves each environment on its own port."""
import socket
from personalwab.env.environment import make_env
from personalwab.data.schema import Behaviour, Review, tiny_benchmark
from personalwab.env.search import get_searcher
from personalwab.web.drivers import InProcessDriver, ShopServer
from personalwab.web.env import ShopEnv
from personalwab.web.observation import number_nodes, parse_page
from personalwab.web.site import ShopSession, shop_app

EVIL = '<script>alert("x")</script><img src=x onerror="steal()"><a href="http://evil.example">click me</a>'

def evil_benchmark():
    b = tiny_benchmark()
    u = b.users["U1"]
    first = u.behaviours[0]
    bad = Behaviour(product_info=first.product_info, review=Review(rating=1.0, title=EVIL, text=EVIL, parent_asin=first.asin, timestamp=500), split="history")
    return b.model_copy(update={"users": {"U1": u.model_copy(update={"behaviours": [bad, *u.behaviours]})}})

def test_review_markup_shows_as_text():
    b = evil_benchmark()
    se = ShopEnv(make_env(b, "single", searcher=get_searcher(b, "bm25s")))
    se.reset("test-00000")
    se.driver.open("/product/B000000001")
    html = se.driver.raw
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    tree = parse_page(html)
    assert not tree.xpath("//body//script") and not tree.xpath("//img") and not tree.xpath('//a[@href="http://evil.example"]')
    obs = se.observe()
    assert "&lt;script&gt;" in obs.dom and "<script" not in obs.dom and "<img" not in obs.dom

def test_typed_markup_adds_no_element():
    b = tiny_benchmark()
    se = ShopEnv(make_env(b, "single", searcher=get_searcher(b, "bm25s")))
    se.reset("train-00000")
    n_before = len(list(se.driver.tree().iter()))
    box = int(se.driver.tree().xpath('//input[@name="q"]')[0].get("node"))
    se.step(f"type({box}, {EVIL!r})")                   # typed, not submitted: the value attribute holds it
    t = se.driver.tree()
    assert len(list(t.iter())) == n_before and t.xpath('//input[@name="q"]')[0].get("value") == EVIL
    se.step(f"type({box}, {EVIL!r}, submit=True)")
    assert se.session.calls[0].arguments == {"query": EVIL}
    assert se.driver.url == "/results/0?page=1" and not parse_page(se.driver.raw).xpath("//body//script")

def test_search_paging_and_product_page():
    b = tiny_benchmark()
    s = ShopSession(make_env(b, "single", searcher=get_searcher(b, "bm25s")))
    s.reset("train-00000")
    d = InProcessDriver(shop_app(s))
    d.open("/")
    lid = s.search("drink")
    d.open(f"/results/{lid}?page=1")
    titles = [a.text_content() for a in d.tree().xpath('//a[starts-with(@href, "/product/")]')]
    assert titles == [b.products[a].title for a in s.listings[lid].items]
    d.open(f"/results/{lid}?page=2")
    assert "No products." in d.raw                       # three products: one page
    d.open("/product/B000000002")
    for text in ("Insulated Water Bottle 32oz", "Price: 24.99", "Store: Hydro Flask", "Rating: 4.5", "Write a review"):
        assert text in d.raw

def test_two_servers_never_share_a_port():
    b = tiny_benchmark()
    s = ShopSession(make_env(b, "single", searcher=get_searcher(b, "bm25s"))); s.reset("train-00000")
    servers = [ShopServer(shop_app(s)).start() for _ in range(3)]
    try:
        assert len({x.port for x in servers}) == 3
        with socket.socket() as probe:                 # the port is held: nobody else can bind it
            try: probe.bind(("127.0.0.1", servers[0].port)); bound = True
            except OSError: bound = False
        assert not bound
    finally:
        for x in servers: x.stop()
