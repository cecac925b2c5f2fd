"""Names shared by every module: result columns, suites, categories, defaults.

Pages, the CLI, the tests and the data files all spell these the same way, so
they live here and nowhere else.
"""

from __future__ import annotations

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
COL_ERROR = "error"
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
# Pairs made on the fly from one typed sentence by core.perturb (not a shipped suite).
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

FAILURE_MODES = (
    CAT_NEGATION,
    CAT_NUMERICAL,
    CAT_ENTITY_SWAP,
    CAT_TEMPORAL,
    CAT_QUANTIFIER,
    CAT_HEDGING,
)
CONTROLS = (CAT_POSITIVE, CAT_NEGATIVE, CAT_NEAR_MISS)

CATEGORY_LABELS = {
    CAT_NEGATION: "Negation",
    CAT_NUMERICAL: "Numerical",
    CAT_ENTITY_SWAP: "Entity/role swap",
    CAT_TEMPORAL: "Temporal",
    CAT_QUANTIFIER: "Quantifier",
    CAT_HEDGING: "Hedging",
    CAT_POSITIVE: "Positive control",
    CAT_NEGATIVE: "Negative control",
    CAT_NEAR_MISS: "Near-miss control",
    CAT_OOV: "OOV entity",
}

# Exact per-category pair counts the papers' designs call for.
SUITE_COUNTS: dict[str, dict[str, int]] = {
    SUITE_OOV: {CAT_OOV: 20},
    SUITE_BASELINE: {
        CAT_ENTITY_SWAP: 10,
        CAT_TEMPORAL: 10,
        CAT_NEGATION: 15,
        CAT_NUMERICAL: 15,
        CAT_QUANTIFIER: 10,
        CAT_HEDGING: 5,
        CAT_POSITIVE: 20,
        CAT_NEGATIVE: 15,
    },
    SUITE_FAILURE_MODES: {
        CAT_NEGATION: 55,
        CAT_NUMERICAL: 56,
        CAT_ENTITY_SWAP: 45,
        CAT_TEMPORAL: 35,
        CAT_QUANTIFIER: 35,
        CAT_HEDGING: 25,
        CAT_POSITIVE: 35,
        CAT_NEGATIVE: 35,
        CAT_NEAR_MISS: 15,
    },
}

DOMAINS = ("medical", "legal", "financial", "product", "safety", "general")

# --- OOV variants: which sentences of a pair carry the invented word ---
VARIANT_ORIGINAL = "original"
VARIANT_REPLACED_BOTH = "replaced_both"
VARIANT_REPLACED_B = "replaced_b"
OOV_VARIANTS = (VARIANT_ORIGINAL, VARIANT_REPLACED_BOTH, VARIANT_REPLACED_B)
OOV_READINGS = {
    VARIANT_REPLACED_BOTH: "entity replaced in both sentences",
    VARIANT_REPLACED_B: "entity replaced in the second sentence only",
}

# --- invented words (core.invented): k fabricated words per OOV entity ---
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
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
ENCODE_BATCH_SIZE = 32
HUB_TIMEOUT_SECONDS = 5.0
CACHE_ENV_VAR = "COSINE_PROBE_CACHE_DIR"
MAX_UPLOAD_ROWS = 5000
# Megabytes per uploaded or CLI pairs file.  The upload widget passes it to
# st.file_uploader, core.pairs_io refuses larger files with a message naming it,
# and .streamlit/config.toml's server.maxUploadSize must hold the same number
# (tests/test_robustness_upload.py checks they agree).
MAX_UPLOAD_MB = 5
