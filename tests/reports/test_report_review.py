"""What the report shows against the result files and the evaluator (found by a review of the page)."""

from __future__ import annotations

from html.parser import HTMLParser

from harness.compare import Settings
from harness.reports.html import build_report, load_results, render
from tests.compare.helpers import write_result

FAST = Settings(permutations=50, resamples=50)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_metric_names_are_escaped_in_the_plot_tooltips(tmp_path):
    """A metric name is text everywhere on the page. The metric@k chart's point tooltips wrote the
    family unescaped: a metrics.json whose metric is named 'X<img src=x onerror=...>@10' put an <img>
    element with its handler into the page (it ran when the page was opened)."""
    evil = 'X<img src=x onerror="window.pwned=1">'
    folders = []
    for s, values in (("s0", (0.1, 0.5, 0.9)), ("s1", (0.2, 0.4, 0.7))):
        per_query = {f"q{i}": {f"{evil}@5": v, f"{evil}@10": v} for i, v in enumerate(values)}
        folders.append(str(write_result(tmp_path / s, per_query)))
    html = render(build_report(load_results(folders), [f"{evil}@10"], None, FAST))
    parser = _Tags()
    parser.feed(html)
    assert "img" not in parser.tags
    assert "<title>s0: X&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;@5 = 0.5000</title>" in html


def test_explorer_top_k_is_the_ranking_the_values_were_computed_on(tmp_path):
    """Each system's top k in the explorer is the evaluator's ranking (docs/report.md: the badges and
    the unjudged count explain the values beside them): a document whose id is the query's is dropped
    (ignore_identical_ids, recorded in metrics.json), and under trec_eval-9 scores equal in float32 tie
    and rank by document id descending. The old page showed run.trec's float64 order with the query's
    own document: 'q0' first for q0 and 'a' first for q1, where the evaluator ranks 'dA' and 'b'
    first (pytrec_eval, trec_eval 9: P@1 of q1 with 'b' relevant is 1)."""
    import pytrec_eval

    run = {"q0": {"q0": 3.0, "dA": 2.0, "dB": 1.0}, "q1": {"a": 1.00000001, "b": 1.0}}
    p1 = pytrec_eval.RelevanceEvaluator({"q1": {"b": 1}}, {"P_1"}).evaluate({"q1": run["q1"]})
    assert p1["q1"]["P_1"] == 1.0  # trec_eval 9 ranks b first
    settings = {"relevance_threshold": 1.0, "ignore_identical_ids": True, "semantics": "trec_eval-9", "depth": 10}
    folders = []
    for name in ("s0", "s1"):
        folder = write_result(tmp_path / name, {"q0": {"P@1": 0.0}, "q1": {"P@1": 1.0}}, settings=settings)
        (folder / "run.trec").write_text("".join(f"{q} Q0 {d} {r + 1} {score!r} t\n" for q, docs in run.items()
                                                 for r, (d, score) in enumerate(docs.items())))
        folders.append(str(folder))
    explorer = build_report(load_results(folders), ["P@1"], None, FAST, top_k=2).datasets[0].explorer
    tops = {q: [explorer["docs"][c] for c in explorer["top"][0][i]] for i, q in enumerate(explorer["queries"])}
    assert tops == {"q0": ["dA", "dB"], "q1": ["b", "a"]}


def test_equal_means_summed_in_another_order_are_both_best(tmp_path):
    """P@3 values k/3 of two systems in another query order: the same mean (exactly 0.6), which numpy
    summed to 0.6 and 0.5999999999999999 (the order-free mean of NUMBERS_VERSION 3 gives 0.6 for both);
    both are the best of the row, on the dataset and the average row (tests/compare/test_best_review.py
    has the oracle)."""
    from tests.compare.test_best_review import A, B

    folders = [str(write_result(tmp_path / name, {f"q{i:02d}": {"P@3": h / 3} for i, h in enumerate(hits)}))
               for name, hits in (("base", [1] * 20), ("A", A), ("B", B))]
    report = build_report(load_results(folders), ["P@3"], None, FAST)
    cells = report.datasets[0].cells["P@3"]
    assert cells["A"]["mean"] == cells["B"]["mean"] == 0.6  # (numpy's: 0.6 and 0.5999999999999999)
    assert {name for name, cell in cells.items() if cell["best"]} == {"A", "B"}


def test_a_folder_name_that_is_not_utf8_does_not_cost_the_page(tmp_path):
    """A result folder named with a Latin-1 byte (Python decodes it as the lone surrogate '\\udce9')
    names its system 'caf\\udce9'; writing the page as UTF-8 failed with "'utf-8' codec can't encode
    character '\\udce9'" and nothing was written. The name is shown as 'caf\\ufffd', as a terminal shows it,
    and the embedded JSON keeps it as the escape \\udce9 (JSON.parse gives the same string back)."""
    import json
    import os
    import re

    from harness.reports.html import write_report

    folders = []
    for name, values in (("a", (0.1, 0.5, 0.9)), (os.fsdecode(b"caf\xe9"), (0.2, 0.4, 0.7))):
        folders.append(str(write_result(tmp_path / name, {f"q{i}": {"M@10": v} for i, v in enumerate(values)},
                                        texts={"q0": "bad \ud800 text"})))
    page = write_report(build_report(load_results(folders), ["M@10"], None, FAST), tmp_path / "r.html")
    html = page.read_text(encoding="utf-8")
    assert "<th>caf\ufffd</th>" in html
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)[1])
    assert data["datasets"][0]["systems"] == ["a", "caf\udce9"]
    assert data["datasets"][0]["texts"][0] == "bad \ud800 text"


def test_dataset_folder_whose_path_holds_an_equals_sign_is_a_plain_folder(tmp_path, harness_cli):
    """`--dataset FOLDER` with 'k=1' in the folder's path was split as LABEL=FOLDER ("no results on a
    dataset '.../k'", exit 2); an existing path is a plain folder, as RESULTS' NAME=PATH rule has it."""
    import json
    import re

    beir = tmp_path / "k=1" / "toy"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": f"title {d}", "text": "t"}) + "\n"
                                               for d in ("d1", "d2")))
    (beir / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": q}) + "\n" for q in ("q0", "q1")))
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td1\t2\nq1\td2\t1\n")
    folders = [str(write_result(tmp_path / s, {"q0": {"M@1": v}, "q1": {"M@1": 1 - v}}, rankings={"q0": ["d1"]}))
               for s, v in (("s0", 0.0), ("s1", 1.0))]
    page = tmp_path / "r.html"
    proc = harness_cli("report", *folders, "-m", "M@1", "-d", beir, "-o", page, "--permutations", "10",
                       "--resamples", "10")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page.read_text(encoding="utf-8"), re.S)[1])
    explorer = data["datasets"][0]
    judged = {q: [explorer["docs"][c] for c in row[::2]] for q, row in zip(explorer["queries"], explorer["judged"])}
    assert judged == {"q0": ["d1"], "q1": ["d2"]}
    assert explorer["titles"][explorer["docs"].index("d1")] == "title d1"


def test_efficiency_cells_show_nan_and_infinity_as_such():
    """A timing of NaN (a hand-edited or foreign metrics.json: Python's JSON reads NaN) was shown as
    "<0.001", a number it is not; finite values keep their documented format."""
    from harness.reports.html.render import _value

    assert [_value(v) for v in (float("nan"), float("inf"), 0.0005, 0.0456, 12.5, 6508.58, 300)] == \
        ["nan", "inf", "<0.001", "0.046", "12.5", "6,509", "300"]
