"""llama.cpp's own converter, ``convert_hf_to_gguf.py``, for the GGUF faithfulness tests.

The converter (its ``conversion`` package and the ``gguf-py`` it imports) comes from the
source distribution of ``llama-cpp-python`` on PyPI, which vendors llama.cpp;
``scripts/fetch_llamacpp_converter.py`` (run by ``scripts/test.sh``) puts it in
``$QKFORMS_LLAMACPP_DIR`` or ``~/.cache/qkforms/llama.cpp-<version>``. Nothing here is
a re-implementation: :func:`convert` runs the converter's model classes in a subprocess
(so that its own ``gguf-py``, newer than the ``gguf`` release on PyPI, is the ``gguf``
it imports) and writes the GGUF file exactly as ``convert_hf_to_gguf.py --outtype f32``
does, with one change: the vocabulary is not written (``set_vocab`` is a no-op), since
the tiny test models have no tokenizer and the vocabulary plays no part in attention; and
one bug of this converter version is worked around (:func:`_yield_stacked_norms`).

Run as a script: ``python llamacpp.py CONVERTER_DIR MODEL_DIR OUT.gguf [FTYPE]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

VERSION = "0.3.36"


def converter_dir() -> Path | None:
    """The fetched converter, or None."""
    env = os.environ.get("QKFORMS_LLAMACPP_DIR")
    root = Path(env) if env else Path.home() / ".cache" / "qkforms" / f"llama.cpp-{VERSION}"
    return root if (root / ".complete").is_file() else None


def convert(model_dir: str | os.PathLike[str], out: str | os.PathLike[str],
            ftype: str = "ALL_F32") -> Path:
    """Convert a saved Hugging Face model directory to GGUF with llama.cpp's converter."""
    root = converter_dir()
    if root is None:
        raise RuntimeError("llama.cpp's converter is not fetched: run "
                           "python scripts/fetch_llamacpp_converter.py")
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, __file__, str(root), str(model_dir), str(out),
                           ftype], capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"convert_hf_to_gguf failed on {model_dir}:\n{proc.stderr[-4000:]}")
    return Path(out)


def _drive(root: Path, model_dir: Path, out: Path, ftype: str) -> None:
    """What ``convert_hf_to_gguf.py main()`` does for a text model, minus the vocabulary."""
    sys.path.insert(0, str(root / "gguf-py"))
    sys.path.insert(0, str(root))
    import gguf
    import torch
    from conversion import ModelBase, ModelType, get_model_architecture, get_model_class

    with torch.inference_mode():
        hparams = ModelBase.load_hparams(model_dir, False)
        arch = get_model_architecture(hparams, ModelType.TEXT)
        cls = get_model_class(arch, mmproj=False)
        cls.set_vocab = lambda self: None  # no tokenizer in the tiny models
        if cls.__name__ == "StableLMModel":
            _yield_stacked_norms(cls)
        model = cls(model_dir, getattr(gguf.LlamaFileType, ftype), out)
        model.write()


def _yield_stacked_norms(cls: type) -> None:
    """Work around a bug of this converter version, without changing what it computes.

    ``StableLMModel.modify_tensors`` is a generator, and for StableLM 2's per-head q/k
    LayerNorms it ``return``s the generator of the stacked gains
    (``_stack_qk_norm``) instead of yielding from it, so they are dropped and the
    converter stops with "Unprocessed norms". Yielding from that returned generator
    writes exactly the tensors the code intends.
    """
    original = cls.modify_tensors

    def modify_tensors(self, data_torch, name, bid):  # type: ignore[no-untyped-def]
        returned = yield from original(self, data_torch, name, bid)
        if returned is not None:
            yield from returned

    cls.modify_tensors = modify_tensors


if __name__ == "__main__":
    _drive(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]),
           sys.argv[4] if len(sys.argv) > 4 else "ALL_F32")
