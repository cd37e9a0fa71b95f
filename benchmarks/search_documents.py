"""How much the search index's document template matters: the top-10 BM25 lists of every
instruction of a benchmark over the catalog indexed with the original's document text
(`personalwab.env.render.product_document`, the memory prompt's product block without its `Product:`
header line, which the original's index does not have) against the same
catalog indexed with other templates.

BM25 normalises term weights by document length, so label words that every document carries
(they have almost no IDF weight of their own) still reorder near-ties. Uses the bm25s engine, which
returns the same ranked lists as Lucene (see nbs/env/20_search.ipynb). Prints the share of queries
whose top-10 list (and top-1 hit) is identical. Usage:
    .venv/bin/python benchmarks/search_documents.py [--data default]
"""
from __future__ import annotations
import argparse, json

from personalwab.data.load import load_benchmark
from personalwab.env.render import product_document, render_product
from personalwab.data.schema import Product
from personalwab.env.search import BM25sSearcher
import personalwab.env.search as search


def previous_template(p: Product) -> str:
    "The ten-line template this package indexed before (lists joined, details JSON unescaped)."
    return "\n".join([f"- Title: {p.title}", f"- Parent Asin: {p.parent_asin}", f"- Average Rating: {p.average_rating}",
                      f"- Rating Number: {p.rating_number}", f"- Price: {p.price}", f"- Store: {p.store}",
                      f"- Features: {'; '.join(map(str, p.features))}", f"- Description: {' '.join(map(str, p.description))}",
                      f"- Details: {json.dumps(p.details, ensure_ascii=False)}", f"- Category: {p.main_category}"])

TEMPLATES = {
    "original (memory-prompt product block, no header)": product_document,
    "recommendation template (same values)": render_product,
    "product block without the word 'Main'": lambda p: product_document(p).replace("- Main Category:", "- Category:"),
    "with a `Product:` header line (this package's index before v4)": lambda p: "Product:\n" + product_document(p),
    "previous template of this package": previous_template,
}

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="default")
    args = ap.parse_args(argv)
    b = load_benchmark(args.data)
    queries = [t.task for ts in b.tasks.values() for t in ts]
    lists = {}
    for name, fn in TEMPLATES.items():
        search.index_document = fn                      # what BM25sSearcher.build indexes
        s = BM25sSearcher.build(b.products)
        lists[name] = [s.search(q, 10) for q in queries]
    ref = lists[next(iter(TEMPLATES))]
    print(f"{args.data}: {len(b.products)} products, {len(queries)} instructions as queries")
    for name, got in list(lists.items())[1:]:
        top10, top1 = sum(a == c for a, c in zip(ref, got)), sum(a[:1] == c[:1] for a, c in zip(ref, got))
        n = len(queries)
        print(f"original vs {name}: same top-10 {top10}/{n} ({top10/n:.1%}), same top-1 {top1}/{n} ({top1/n:.1%})")

if __name__ == "__main__": main()
