"""BFR Workbench: the Streamlit frame (page config, sidebar, navigation). Run: streamlit run app.py

The sidebar picks the store (default: the embedded demo store, built on first start) and the LLM
provider ("offline rules" unless a model is configured), and holds the Refresh button that clears
cached frames. Each page lives in pages/ and only reads widgets, calls bfr_core and renders.

The store is held only while a page runs (``Store.session``): an idle app holds no lock, so
``bfr eval`` can run beside it; while another process holds the file the page reads a snapshot and
labels are queued, then written on the first request after it lets go. In team mode (``BFR_TEAM=1``, or an ``[auth]``
section in .streamlit/secrets.toml) every page needs a login first (``ui.access``).
"""

from contextlib import ExitStack

import streamlit as st

from bfr_core.errors import BfrError
from ui import access, markup, storepath
from ui import resources as R

# The page icon is a file of this repository, sent inline: a ":material/..." or emoji icon makes every
# browser fetch an image from a third-party font or emoji server.
st.set_page_config(page_title="BFR Workbench", page_icon=R.ICON, layout="wide")
access.require_login()

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/data.py", title="Data", icon=":material/database:"),
    st.Page("pages/trace.py", title="Trace", icon=":material/account_tree:"),
    st.Page("pages/demo.py", title="Demo", icon=":material/photo_camera:"),
    st.Page("pages/evaluate.py", title="Evaluate", icon=":material/play_circle:"),
    st.Page("pages/failures.py", title="Failures", icon=":material/table_view:"),
    st.Page("pages/annotate.py", title="Annotate", icon=":material/rule:"),
    st.Page("pages/judges.py", title="Judges", icon=":material/gavel:"),
]
page = st.navigation(PAGES)

with st.sidebar:
    access.sidebar()
    R.sticky("app_store", R.initial_store_path())
    st.text_input("Store (DuckDB file)", key="app_store",
                  help="Default: the embedded demo store, built from data/demo.jsonl on first start.")
    options = R.provider_options()
    R.sticky("app_provider", options[0], options)
    st.selectbox("LLM provider", options, key="app_provider",
                 help="“offline rules” are deterministic heuristics: no model, no network. "
                      "Configure a model in bfr.toml in the repository folder (or the file $BFR_CONFIG "
                      "names): [llm] provider = \"local\" (after scripts/install_local_llm.sh), "
                      "\"anthropic\" or \"openai\", and model; it is then added here.")
    if options == [R.OFFLINE]:
        st.caption("Provider: **offline rules** (no model configured). For a model on this machine: "
                   "`bash scripts/install_local_llm.sh`, then name it in the config file the help "
                   "(?) above names, as the README's “Using a model” shows; then Refresh.")
    elif R.provider() == R.OFFLINE:
        st.caption("Provider: **offline rules** (deterministic heuristics, no model)")
    if st.button("Refresh", icon=":material/refresh:", help="Re-read the store (clears cached tables)"):
        R.refresh()

_path = R.store_path()
_file = R.resolve(_path)
_problem = storepath.problem(_file, is_default=_path == R.default_store_path(), create=False)
# one box per path, drawn only while the path names no file: a tick never carries over to a later
# typo (which would silently create an empty store)
if _problem and storepath.creatable(_file) and st.sidebar.checkbox(
        "Create a new store here", key=f"app_create:{_path}",
        help="Off: a path that does not exist is an error (no empty store is made by accident)."):
    _problem = storepath.problem(_file, is_default=False, create=True)
if _problem:
    st.error(_problem, icon=":material/error:")
    st.stop()
with ExitStack() as held:
    try:
        store = R.store()
        held.enter_context(store.session())  # let go when this run ends: idle, the app holds no lock
        queued = R.flush_queued_labels(store)
    except BfrError as exc:
        st.error(markup.text(exc))
        st.stop()
    if R.being_written(store):
        st.info(f"{markup.code(store.snapshot_of)} is being written by another process (for example a `bfr ingest` in a "
                "terminal) and holds no dataset yet. Press Refresh when it has finished.",
                icon=":material/hourglass_top:")
        st.stop()
    if store.snapshot_of:
        st.warning(f"{markup.code(store.snapshot_of)} is in use by another process (for example a running `bfr eval`): "
                   "showing a read-only snapshot as of its last checkpoint. Labels you save are queued "
                   "and written when that process ends; press Refresh then to see its results.",
                   icon=":material/lock:")
    elif st.session_state.pop("app_was_snapshot", False):
        R.refresh()  # the other process let go: frames cached from the snapshot are stale
    if store.snapshot_of:
        st.session_state["app_was_snapshot"] = True
    if queued:
        st.toast(f"{queued} label(s) saved while the store was busy are now written.")
    torn, kept_in = R.set_aside_labels(store)
    if torn:
        st.sidebar.warning(f"{torn} line(s) of the queued-label file could not be written as labels (a save killed "
                           f"while it wrote, or an edited file) and are kept in {markup.code(kept_in)}; "
                           "every valid label was written.", icon=":material/warning:")
    page.run()
