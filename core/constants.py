"""Names shared by every module: result columns, suites, categories, defaults.

Pages, the CLI, the tests and the data files all spell these the same way, so
they live here and nowhere else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


# --- environment variables: one record each, every module reads its name and value here ---
@dataclass(frozen=True)
class EnvVar:
    """An environment variable cosine-probe reads.

    Attributes:
        name: the variable's name (``COSINE_PROBE_CACHE_DIR``).
        meaning: what it sets, in a phrase (``docs/development.md`` lists every record's).
        default: what holds when it is unset, in words.
    """

    name: str
    meaning: str
    default: str

    def value(self, unset: str = "") -> str:
        """The variable's value with surrounding blanks removed, ``unset`` when it is not set or blank."""
        return os.environ.get(self.name, "").strip() or unset


ENV_CACHE_DIR = EnvVar(
    "COSINE_PROBE_CACHE_DIR", "the cache folder (embeddings, exports, the run history)", "cosine-probe in the user cache folder"
)
ENV_WARM_IN_BACKGROUND = EnvVar("COSINE_PROBE_WARM_IN_BACKGROUND", "0 or off: the app does not fill a cold cache in the background", "on")
ENV_HISTORY = EnvVar(
    "COSINE_PROBE_HISTORY", "off (or 0) records no run; any other value is the history file's path", "history.duckdb in the cache folder"
)
ENV_BACKEND = EnvVar("COSINE_PROBE_BACKEND", "the backend a process prefers: auto, torch or onnx (--backend overrides it)", "auto")
ENV_DEFAULT_MODELS = EnvVar(
    "COSINE_PROBE_DEFAULT_MODELS", "comma-separated models scored when none is named", "the installed bundled models"
)
ENV_BOOTSTRAP_RESAMPLES = EnvVar("COSINE_PROBE_BOOTSTRAP_RESAMPLES", "bootstrap resamples per interval", "2000")
ENV_ENDPOINT_TIMEOUT = EnvVar("COSINE_PROBE_ENDPOINT_TIMEOUT", "seconds an endpoint may take to answer one request", "15")
ENV_ENDPOINTS = EnvVar(
    "COSINE_PROBE_ENDPOINTS", "endpoints a shared app's visitors may use with a server key (URL=KEY_VARIABLE items)", "none"
)
ENV_STORES = EnvVar("COSINE_PROBE_STORES", "store folders and HOST:PORT servers a shared app may open", "none: store access off")
ENV_LOAD_LOG = EnvVar("COSINE_PROBE_LOAD_LOG", "a file each real model load is appended to as a JSON line", "no file")
ENV_DEBUG = EnvVar("COSINE_PROBE_DEBUG", "any value: the CLI shows a failure's traceback instead of one line", "one line")
ENV_RAY_ADDRESS = EnvVar("RAY_ADDRESS", "the Ray cluster --engine ray joins", "a local Ray instance")
ENV_RAY_USE_TLS = EnvVar("RAY_USE_TLS", "1, true or yes: the Ray cluster speaks TLS", "no TLS")
ENV_OPENAI_BASE_URL = EnvVar("OPENAI_BASE_URL", "an endpoint model's base URL when none is given", "https://api.openai.com/v1")
ENV_OPENAI_API_KEY = EnvVar("OPENAI_API_KEY", "the key an endpoint model sends when --api-key-env names no other variable", "no key")
ENV_HF_ENDPOINT = EnvVar("HF_ENDPOINT", "the Hugging Face hub probed for a model not cached", "https://huggingface.co")
ENV_HF_HUB_OFFLINE = EnvVar("HF_HUB_OFFLINE", "set (not 0 or false): the hub is never probed", "the hub is probed")
ENV_CUDA_VISIBLE_DEVICES = EnvVar("CUDA_VISIBLE_DEVICES", "blank or -1: no GPU is looked for", "every GPU")
ENV_XDG_CACHE_HOME = EnvVar("XDG_CACHE_HOME", "the user cache folder on Linux", "~/.cache")
ENV_LOCALAPPDATA = EnvVar("LOCALAPPDATA", "the user cache folder on Windows", "~/AppData/Local")
ENV_VARS = (
    ENV_CACHE_DIR,
    ENV_WARM_IN_BACKGROUND,
    ENV_HISTORY,
    ENV_BACKEND,
    ENV_DEFAULT_MODELS,
    ENV_BOOTSTRAP_RESAMPLES,
    ENV_ENDPOINT_TIMEOUT,
    ENV_ENDPOINTS,
    ENV_STORES,
    ENV_LOAD_LOG,
    ENV_DEBUG,
    ENV_RAY_ADDRESS,
    ENV_RAY_USE_TLS,
    ENV_OPENAI_BASE_URL,
    ENV_OPENAI_API_KEY,
    ENV_HF_ENDPOINT,
    ENV_HF_HUB_OFFLINE,
    ENV_CUDA_VISIBLE_DEVICES,
    ENV_XDG_CACHE_HOME,
    ENV_LOCALAPPDATA,
)

# --- result table columns (tidy long format: one row per pair per model) ---
COL_MODEL = "model"
COL_SUITE = "suite"
COL_CATEGORY = "category"
COL_PAIR_ID = "pair_id"
COL_TEXT_A = "text_a"
COL_TEXT_B = "text_b"
COL_COSINE = "cosine"
COL_DOMAIN = "domain"
COL_SOURCE = "source"
COL_LABEL = "label"
COL_VARIANT = "variant"
COL_ENTITY = "entity"
COL_REPLACEMENT = "replacement"
COL_TOKENS_A = "n_tokens_a"
COL_TOKENS_B = "n_tokens_b"
COL_TRUNCATED = "truncated"
COL_TOKEN_JACCARD = "token_jaccard"
COL_WORD_JACCARD = "word_jaccard"
COL_RULE = "rule"
COL_THRESHOLD = "threshold"
COL_CHANGE = "change"

RESULT_COLUMNS = (
    COL_MODEL,
    COL_SUITE,
    COL_CATEGORY,
    COL_PAIR_ID,
    COL_TEXT_A,
    COL_TEXT_B,
    COL_COSINE,
)

# --- suites ---
SUITE_OOV = "oov"
SUITE_BASELINE = "baseline"
SUITE_FAILURE_MODES = "failure-modes"
SUITES = (SUITE_OOV, SUITE_BASELINE, SUITE_FAILURE_MODES)
SUITE_ALL = "all"
# Pairs made on the fly from one typed sentence by core.probes.perturb (not a shipped suite).
SUITE_PERTURB = "perturb"

# --- categories ---
CAT_NEGATION = "negation"
CAT_NUMERICAL = "numerical"
CAT_ENTITY_SWAP = "entity_swap"
CAT_TEMPORAL = "temporal"
CAT_QUANTIFIER = "quantifier"
CAT_HEDGING = "hedging"
CAT_POSITIVE = "positive"
CAT_NEGATIVE = "negative"
CAT_NEAR_MISS = "near_miss"
CAT_OOV = "oov"

# The failure modes themselves (names, labels, order, suite counts) are records in core.lexicon
# (``MODE_RECORDS``, ``FAILURE_MODES``, ``CATEGORY_LABELS``, ``SUITE_COUNTS``); the names above stay
# here because suites, results and the papers' tables spell them.
CONTROLS = (CAT_POSITIVE, CAT_NEGATIVE, CAT_NEAR_MISS)
# A contradiction of no named mode (natural NLI data): reported as what it is, never mislabelled as negation.
CAT_CONTRADICTION = "contradiction"

# Labels of the categories that are not failure modes (each mode's label is on its record).
OTHER_CATEGORY_LABELS = {
    CAT_POSITIVE: "Positive control",
    CAT_NEGATIVE: "Negative control",
    CAT_NEAR_MISS: "Near-miss control",
    CAT_CONTRADICTION: "Contradiction (no named mode)",
    CAT_OOV: "OOV entity",
}

# Exact pair counts of the categories that are not failure modes, per suite (each mode's counts are on its record).
OTHER_SUITE_COUNTS: dict[str, dict[str, int]] = {
    SUITE_OOV: {CAT_OOV: 20},
    SUITE_BASELINE: {CAT_POSITIVE: 20, CAT_NEGATIVE: 15},
    SUITE_FAILURE_MODES: {CAT_POSITIVE: 35, CAT_NEGATIVE: 35, CAT_NEAR_MISS: 15},
}

DOMAINS = ("medical", "legal", "financial", "product", "safety", "general")

# --- OOV variants: which sentences of a pair carry the invented word ---
VARIANT_ORIGINAL = "original"
VARIANT_REPLACED_BOTH = "replaced_both"
VARIANT_REPLACED_B = "replaced_b"
OOV_VARIANTS = (VARIANT_ORIGINAL, VARIANT_REPLACED_BOTH, VARIANT_REPLACED_B)
# One colour per model across the app and the HTML report (MiniLM-L6 blue, its int8 twin orange):
# registry models by their place in the registry, any other model by a stable hash of its name.
# Plotly's qualitative palette, then Dark24's.
MODEL_PALETTE = (
    "#636EFA",
    "#EF553B",
    "#00CC96",
    "#FFA15A",
    "#AB63FA",
    "#19D3F3",
    "#FF6692",
    "#B6E880",
    "#FF97FF",
    "#FECB52",
    "#2E91E5",
    "#E15F99",
    "#1CA71C",
    "#FB0D0D",
    "#DA16FF",
    "#222A2A",
    "#B68100",
    "#750D86",
    "#EB663B",
    "#511CFB",
)

# The one default OOV reading of core, the CLI and both OOV pages: the paper's pair is an
# original sentence and a "modified sentence" with the entity replaced (section 3.2), i.e. the invented word in
# the second sentence only, and that reading is the one whose deltas resemble the published figures.
OOV_DEFAULT_READING = VARIANT_REPLACED_B
OOV_READINGS = {
    VARIANT_REPLACED_BOTH: "entity replaced in both sentences",
    VARIANT_REPLACED_B: "entity replaced in the second sentence only",
}

# --- invented words (core.probes.invented): k fabricated words per OOV entity ---
# Its own suite name, so analysis.oov_deltas (suite "oov", one word per item)
# never averages several replicates into one cell.
SUITE_OOV_INVENTED = "oov-invented"
# A typed sentence against itself with one word replaced by invented ones.
SUITE_OOV_SLOT = "oov-slot"
COL_KIND = "kind"
COL_REPLICATE = "replicate"
COL_N_PIECES = "n_pieces"
COL_PIECES = "pieces"
WORD_PLAUSIBLE = "plausible"
WORD_RANDOM = "random"
WORD_KINDS = (WORD_PLAUSIBLE, WORD_RANDOM)
OOV_REPLICATES = 5
INVENTED_LENGTH = (5, 10)
INVENTED_ATTEMPTS_PER_WORD = 5000

# --- defaults ---
DEFAULT_THRESHOLD = 0.7
THRESHOLD_GRID_STEP = 0.01
# Bootstrap resamples are a tuning knob read at call time: core/settings.py.
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
ENCODE_BATCH_SIZE = 32
# --- devices (core.models.device): what the user asks for, what torch runs on ---
DEVICE_AUTO = "auto"
DEVICE_CPU = "cpu"
DEVICE_CUDA = "cuda"
DEVICE_MPS = "mps"
DEVICE_CHOICES = (DEVICE_AUTO, DEVICE_CPU, DEVICE_CUDA, DEVICE_MPS)
# Texts per forward pass: a GPU amortises its launch cost over more rows; the CPU one is ENCODE_BATCH_SIZE.
BATCH_SIZE_BY_DEVICE = {DEVICE_CPU: ENCODE_BATCH_SIZE, DEVICE_CUDA: 128, DEVICE_MPS: 64}
HUB_TIMEOUT_SECONDS = 5.0
CACHE_ENV_VAR = ENV_CACHE_DIR.name
# The embedding cache's sqlite file in the cache folder (core.models.cache).
EMBEDDING_CACHE_FILE = "embeddings.sqlite"
# --- warm by default: what a new user will certainly ask for, encoded at set-up or in the background ---
# "0" (or "off") keeps the app from filling a cold cache in the background (the tests set it; `make setup` warms instead).
WARM_ENV_VAR = ENV_WARM_IN_BACKGROUND.name
# The pages' first inputs, shared with the warm-up so what is shown first is what is cached.
EXAMPLE_SENTENCE_A = "The patient is allergic to penicillin"
EXAMPLE_SENTENCE_B = "The patient is not allergic to penicillin"
EXAMPLE_HEATMAP_SENTENCES = (
    "The patient is allergic to penicillin",
    "The patient is not allergic to penicillin",
    "The patient has a penicillin allergy",
    "Stock prices fell sharply in March",
)
# Retrieval's default run: a deterministic sample of this many anchor groups (the full suite is one click away).
RETRIEVAL_QUICK_GROUPS = 25
# A run expected to take longer than this says how long before it starts.
ESTIMATE_SHOWN_ABOVE_SECONDS = 10.0
# --- run history (core.history): a DuckDB file in the cache folder ---
HISTORY_FILE = "history.duckdb"
# "off" (or "0") records nothing; any other value is the history file's path.
HISTORY_ENV_VAR = ENV_HISTORY.name
# DuckDB lets one process at a time open the file: another waits this long, then says so.
HISTORY_LOCK_TIMEOUT_SECONDS = 10.0
ORIGIN_CLI = "cli"
ORIGIN_APP = "app"
COL_RUN_ID = "run_id"
COL_CREATED_AT = "created_at"
COL_ORIGIN = "origin"
COL_COMMAND = "command"
COL_REVISION = "revision"
COL_BACKEND = "backend"
# Rows per upload on the Your data page: a 50,000-row upload scored by MiniLM was measured (bench: upload_50k,
# README Performance); a larger file is run by the CLI in chunks, and the page names the command.
MAX_UPLOAD_ROWS = 50_000
# Megabytes per uploaded or CLI pairs file.  The upload widget passes it to
# st.file_uploader, core.files.reader refuses larger files with a message naming it,
# and .streamlit/config.toml's server.maxUploadSize must hold the same number
# (tests/robustness/test_robustness_upload.py checks they agree).
MAX_UPLOAD_MB = 20

# --- any-size CLI runs (core.files.chunks, core.scoring.chunked): pairs per chunk, whole reads ---
# A chunk of pairs is read, checked, encoded, scored and written before the next is read.
RUN_CHUNK_PAIRS = 4096
# The largest --chunk-rows: a chunk is held in memory, and Arrow's batch size is a C long.
RUN_MAX_CHUNK_PAIRS = 10_000_000
# A text pairs file up to this size is read whole (exact per-line notes, checks over the whole
# file) and then scored in chunks; a larger one, and every Parquet file, is read chunk by chunk.
RUN_WHOLE_READ_BYTES = 16 * 1024 * 1024
RUN_MAX_WHOLE_ROWS = 10_000_000
# A run of more result rows than this is not copied into the run history (it would be held in
# memory whole); pairs.parquet keeps every row.
RUN_HISTORY_MAX_ROWS = 50_000
RESULTS_PARQUET = "pairs.parquet"
RESULTS_CSV = "pairs.csv"

# --- retrieval probes (core.probes.retrieval): anchor groups, queries, rankings ---
# Not in SUITES: it is wide (one anchor group per row), not a pairs file.
SUITE_RETRIEVAL = "retrieval"
COL_GROUP_ID = "group_id"
COL_ANCHOR = "anchor"
COL_PARAPHRASE = "paraphrase"
COL_QUERY_MODE = "query_mode"
COL_Q1 = "q1"
COL_Q2 = "q2"
COL_ROLE = "role"
COL_MODE = "mode"
COL_WHICH = "which"
COL_TEXT = "text"
COL_QUERY = "query"
COL_MITIGATION = "mitigation"
ROLE_ANCHOR = "anchor"
ROLE_PARAPHRASE = "paraphrase"
ROLE_VARIANT = "variant"
RETRIEVAL_ROLES = (ROLE_ANCHOR, ROLE_PARAPHRASE, ROLE_VARIANT)
QUERY_WHICH = (COL_Q1, COL_Q2)
# Pairs-file categories that mark the meaning-preserving passage of a group.
PARAPHRASE_CATEGORIES = ("paraphrase", CAT_POSITIVE, "correct")
MITIGATION_NONE = "none"
MODE_ALL = "all"
RETRIEVAL_MIN_MODES = 3
# NevIR: two queries, two passages, ranked at random -> both right with p = 1/4.
PAIRED_RANDOM_BASELINE = 0.25
# The one record of recall@k cut-offs: every ranking reports recall at these (triples, BEIR, a store's search and an
# index setting against exact), MRR and nDCG stop at the deepest (MRR@10, nDCG@10), and a binary shortlist is
# rescored for it.
IR_RECALL_KS = (1, 5, 10)
# The retrieval suite's in-corpus ranking reports the first two of them (its before/after table already carries win
# rate and paired accuracy beside them).
RECALL_KS = IR_RECALL_KS[:2]
# Columns of the retrieval tables (core.probes.retrieval.tables).
COL_N = "n"
COL_CI_LOW = "ci_low"
COL_CI_HIGH = "ci_high"
COL_WIN = "win"
COL_WINS = "wins"
COL_WIN_RATE = "win_rate"
COL_SCORE_PARAPHRASE = "score_paraphrase"
COL_SCORE_VARIANT = "score_variant"
COL_PAIRED_CORRECT = "paired_correct"
COL_PAIRED_ACCURACY = "paired_accuracy"
COL_RANDOM = "random"
COL_N_QUERIES = "n_queries"
COL_RANK_CORRECT = "rank_correct"
COL_RANK_CONTRADICTION = "rank_contradiction"
COL_TOP1_CONTRADICTION = "top1_contradiction"
COL_MRR = "mrr"
COL_PARAPHRASES_LOST = "paraphrases_lost"
COL_CORRECT_LOST = "correct_lost"
COL_MS_PER_QUERY = "ms_per_query"
COL_OUTRANKS = "outranks"
# One recall@k column per k of RECALL_KS.
COL_RECALL_AT = {k: f"recall_at_{k}" for k in RECALL_KS}

# --- triples and BEIR folders (core.files.triples, core.files.beir, core.probes.retrieval.triples / .beir) ---
COL_SOURCE_ROW = "row"
COL_POSITIVE = "positive"
COL_NEGATIVE = "negative"
COL_NEGATIVE_COLUMN = "negative_column"
COL_TIE = "tie"
COL_TIES = "ties"
COL_TIE_RATE = "tie_rate"
COL_N_PASSAGES = "n_passages"
COL_TOP1_NEGATIVE = "top1_negative"
IR_CUTOFF = IR_RECALL_KS[-1]
COL_IR_RECALL_AT = {k: f"recall_at_{k}" for k in IR_RECALL_KS}
COL_MRR_AT = f"mrr_at_{IR_CUTOFF}"
COL_NDCG_AT = f"ndcg_at_{IR_CUTOFF}"
# Judged rankings (triples, BEIR): queries whose figures trec_eval's tie rule decided (core.probes.retrieval.metrics.decided_ties).
COL_TIE_DECIDED = "tie_decided"
COL_TIED_QUERIES = "tied_queries"
# A mitigation's churn against the plain cosine: outcomes it fixed and outcomes it broke, beside each net figure.
COL_FIXED = "fixed"
COL_BROKEN = "broken"

# --- why a score (core.probes.explain): token attributions and layer curves ---
COL_SIDE = "side"
COL_POSITION = "position"
COL_TOKEN = "token"
COL_WORD = "word"
COL_ATTRIBUTION = "attribution"
COL_METHOD = "method"
COL_LAYER = "layer"
COL_DEPTH = "depth"
COL_WORD_POSITION = "word_position"
COL_UNIT = "unit"
SIDE_A, SIDE_B = "A", "B"
METHOD_OCCLUSION = "occlusion"
METHOD_IG = "ig"
EXPLAIN_METHODS = (METHOD_OCCLUSION, METHOD_IG)
UNIT_TOKEN, UNIT_WORD = "token", "word"
EXPLAIN_UNITS = (UNIT_TOKEN, UNIT_WORD)
# Integrated-gradients baselines: every content token's input embedding becomes [PAD]'s or [MASK]'s.
BASELINE_PAD, BASELINE_MASK = "pad", "mask"
IG_BASELINES = (BASELINE_PAD, BASELINE_MASK)
IG_STEPS = 50
# [MASK], measured on the penicillin pair: with [PAD], MiniLM spreads the change evenly over both sides (README "Why a score").
IG_BASELINE = BASELINE_MASK
# Completeness: attributions must sum to cos(pair) - cos(baseline pair) within this share of it,
# or within the absolute floor when that difference is itself ~0 (identical sentences).
IG_MAX_RELATIVE_MISS = 0.05
IG_MISS_FLOOR = 1e-4
EXPLAIN_TOP_TOKENS = 5

# --- retrieval mitigations (core.probes.retrieval.mitigations): names in --mitigate, and their settings ---
MITIGATION_BM25 = "bm25"  # the same as bm25-rrf
MITIGATION_BM25_RRF = "bm25-rrf"
MITIGATION_BM25_WEIGHTED = "bm25-weighted"  # bm25-weighted:W, W the weight of the lexical score
MITIGATION_GUARD = "guard"
MITIGATION_CALIBRATED = "calibrated"
MITIGATION_RERANKER = "reranker"  # reranker:ID, a Hugging Face id or local folder of a cross-encoder
# Reciprocal rank fusion's k (Cormack et al. 2009): 1 / (k + rank) keeps one top rank from dominating.
RRF_K = 60
BM25_WEIGHT_STEP = 0.1
COL_BM25_WEIGHT = "bm25_weight"
# The guard looks at passages scoring within GAP of a query's best or above MIN, at most MAX_CANDIDATES
# of them, and subtracts PENALTY from a demoted one.  0.2 moves a contradiction below the near-duplicates
# it competes with but not below unrelated text: on the retrieval suite with MiniLM-L6 it cut the win rate
# from 91% to 25% and kept recall@5 at 93% (92% before), where 1.0 cut it to 24% but dropped recall@5 to 75%.
GUARD_FLOOR_GAP = 0.05
GUARD_FLOOR_MIN = 0.5
GUARD_MAX_CANDIDATES = 10
GUARD_PENALTY = 0.2
# A cross-encoder rescores each query's RERANK_TOP_K best passages by cosine; the rest keep their order below.
RERANK_TOP_K = 20
# How the Retrieval page names each mitigation (bm25-weighted:W and reranker:ID add their argument).
MITIGATION_LABELS = {
    MITIGATION_NONE: "none (dense cosine)",
    MITIGATION_BM25_RRF: "BM25 + dense (RRF)",
    MITIGATION_BM25_WEIGHTED: "BM25 + dense (weighted)",
    MITIGATION_GUARD: "contradiction guard",
    MITIGATION_CALIBRATED: "calibrated threshold",
    MITIGATION_RERANKER: "reranker",
}
# Compare's third box (core.probes.retrieval.should_win): query = sentence A, passages = B and the one that should win.
COL_COSINE_B = "cosine_b"
COL_COSINE_SHOULD_WIN = "cosine_should_win"
COL_RANKED_FIRST = "ranked_first"
RANKED_B, RANKED_SHOULD_WIN, RANKED_TIE = "sentence B", "the passage that should win", "tie"
VERDICT_CONTRADICTION_WINS = "the contradiction wins"
VERDICT_RIGHT_PASSAGE_WINS = "the right passage wins"
VERDICT_TIE = "a tie: either could be returned first"

# --- backends and engines: exact ONNX exports of the bundled torch models, Ray ---
# "auto" runs a bundled torch model on its verified fp32 ONNX export on the CPU (torch elsewhere);
# COSINE_PROBE_BACKEND sets the default for a process (the CLI's --backend overrides it).
BACKEND_AUTO = "auto"
BACKEND_CHOICES = (BACKEND_AUTO, "torch", "onnx")
BACKEND_ENV_VAR = ENV_BACKEND.name
ONNX_EXPORT_FOLDER = "onnx"  # under the cache folder
ONNX_OPSET = 17
# Every cosine of the fixed verification set under the export within this of the torch model's.
ONNX_VERIFY_TOLERANCE = 1e-5
# What the one-off export and its check against torch take on a 2-core CPU, torch import included
# (the first run names it instead of showing a bare spinner); other bundles fall back to the default.
ONNX_EXPORT_EXPECTED_SECONDS = {"minilm_l6": 45, "mpnet": 120}  # measured: MiniLM-L6 56 s on a busy 2-core machine (e2e)
ONNX_EXPORT_EXPECTED_DEFAULT_S = 120
ENGINE_LOCAL = "local"
ENGINE_RAY = "ray"
ENGINE_CHOICES = (ENGINE_LOCAL, ENGINE_RAY)
RAY_ADDRESS_ENV_VAR = ENV_RAY_ADDRESS.name
# Seconds to wait for a $RAY_ADDRESS to answer before one error line (Ray itself retries for minutes).
RAY_CONNECT_TIMEOUT_S = 10.0
# Texts per Ray batch when the Ray engine encodes what the cache lacks (one block each: batches spread over the actors).
RAY_BATCH_TEXTS = 512
# GPUs each Ray actor reserves under --device cuda (a fraction shares one GPU between actors).
RAY_GPUS_PER_ACTOR = 1.0

# --- mitigations measured where they were not tuned; `tune` ---
# A retrieval variant is "rule-made" when core.probes.perturb.perturb(anchor) writes it word for word
# (the contradiction guard inverts those rules), "hand-written" otherwise: the held-out kind, reported first.
COL_VARIANT_SOURCE = "variant_source"
SOURCE_HAND, SOURCE_RULE = "hand-written", "rule-made"
VARIANT_SOURCES = (SOURCE_HAND, SOURCE_RULE)
COL_SPLIT = "split"
SPLIT_HELD_OUT, SPLIT_TRAIN = "held-out", "training"
TUNE_SPLITS = (SPLIT_HELD_OUT, SPLIT_TRAIN)
COL_SETTING = "setting"
TUNE_SETTING_UNTOUCHED, TUNE_SETTING_TUNED, TUNE_SETTING_CONTROL = "untouched", "tuned", "control (no hard negatives)"
TUNE_SETTING_NOT_AVERAGED = "tuned, not averaged"
TUNE_SETTINGS = (TUNE_SETTING_UNTOUCHED, TUNE_SETTING_TUNED, TUNE_SETTING_NOT_AVERAGED, TUNE_SETTING_CONTROL)
TUNE_DEFAULT_LR = 1e-4
TUNE_DEFAULT_BATCH = 16
TUNE_DEFAULT_EPOCHS = 3
TUNE_DEFAULT_WARMUP = 0.1
TUNE_DEFAULT_AVERAGE = 0.5  # weight of the tuned model when averaged with the original (WiSE-FT); 1.0 keeps it as tuned
TUNE_DEFAULT_MNRL_SCALE = 20.0
TUNE_TRAIN_FRACTION = 0.5
# A mode "did not move" when its held-out win rate fell by fewer than this many points.
TUNE_MOVED_POINTS = 10.0
# The shortcut warning: same-meaning negation pairs ("open" / "not closed") whose mean cosine fell by at least this much.
TUNE_SHORTCUT_DROP = 0.05
