"""``--param`` values are checked against the component's constructor annotations, as a bench config's
params are (harness.params): JSON's ``false`` is a bool, Python's ``False`` was the string
"False", which ``bool()`` reads as true, so ``-p normalize=False`` ran with normalize on, silently."""

from __future__ import annotations

import pytest

from harness.cli.options import parse_params
from harness.errors import HarnessError


@pytest.mark.parametrize("component, item, message", [
    ("dense", "normalize=False", '--param normalize: expected true or false, got "False"'),
    ("bm25", "lossy_lengths=no", '--param lossy_lengths: expected true or false, got "no"'),
    ("bm25", "k1=true", "--param k1: expected a number, got true"),
    ("sqlite", "cache=off", '--param cache: expected true or false, got "off"'),
    ("bm25", "k2=1", '--param k2: unknown parameter for retriever "bm25" (it takes: backend, k1, b, method, '
                     'idf_method, delta, lossy_lengths, tokenizer, stopwords, stemmer, possessive, lowercase, '
                     'cache, cache_dir, n_threads, fields)'),
])
def test_a_value_of_the_wrong_type_is_refused_naming_the_parameter(component, item, message):
    with pytest.raises(HarnessError) as err:
        parse_params([item], component)
    assert str(err.value) == message


def test_values_of_the_right_type_pass_and_a_str_parameter_keeps_its_text():
    assert parse_params(["normalize=false", "batch_size=8", "max_seq_length=null"], "dense") == {
        "normalize": False, "batch_size": 8, "max_seq_length": None}
    # JSON reads 1234567 as a number; revision is a str (a commit prefix): the text as typed is kept
    assert parse_params(["revision=1234567", "query_prompt=[x]"], "dense") == {"revision": "1234567",
                                                                               "query_prompt": "[x]"}
    assert parse_params(["k1=1.2", "b=0"], "bm25") == {"k1": 1.2, "b": 0}
    assert parse_params(["anything=False"]) == {"anything": "False"}  # no component: not checked


@pytest.mark.parametrize("component, params", [
    ("bi-encoder", {"normalize": "False"}),  # forwarded to the dense retriever through **kwargs: not annotated
    ("bi-encoder", {"cache": "no"}),
])
def test_components_refuse_a_flag_that_is_no_bool_themselves(component, params):
    # the bi-encoder reranker passes its dense params on as **kwargs, which parse_params cannot check
    # against annotations: DenseRetriever read bool("False") as True (session review). Each component
    # now checks its true/false parameters itself (harness.retriever.flag).
    from harness.registry import create_reranker

    name, value = next(iter(params.items()))
    assert parse_params([f"{name}={value}"], component, reranker=True) == params  # passed through unchecked
    with pytest.raises(ValueError, match=rf"^{name} must be true or false, got '{value}'$"):
        create_reranker(component, **params)


def test_a_parameter_given_twice_is_refused_naming_it(harness_cli, tmp_path):
    """`harness run -p k1=0.5 -p k1=1.5` ran with k1 1.5 (the last silently won; no doc says so), exit 0:
    a typo (-p k1=0.5 -p k1=... meant for b) ran another configuration than the one typed. Expected: one
    line naming the parameter and both values, exit 2, nothing written; a key given once still passes."""
    with pytest.raises(HarnessError) as err:
        parse_params(["k1=0.5", "b=0.4", "k1=1.5"], "bm25")
    assert str(err.value) == "--param k1 is given twice (k1=0.5 and k1=1.5): give it once"
    assert parse_params(["k1=1", "k1=1"]) == {"k1": 1}  # the same text twice is one setting, not a conflict
    assert parse_params(["k1=0.5", "k1=0.50"]) == {"k1": 0.5}  # so is the same value in other digits
    for first, second in (("1", "1.0"), ("1", "true"), ("0.5", "0.6"), ('{"a": 1}', '{"a": 1.0}')):  # (another type too)
        with pytest.raises(HarnessError, match="--param k1 is given twice"):
            parse_params([f"k1={first}", f"k1={second}"])
    done = harness_cli("run", "-d", "scifact", "-r", "bm25", "-p", "k1=0.5", "-p", "k1=1.5", "-o", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: --param k1 is given twice (k1=0.5 and k1=1.5): give it once"]
    assert not (tmp_path / "out").exists()
