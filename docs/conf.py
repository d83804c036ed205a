"""Sphinx configuration of the sosl documentation (``make docs``).

Why Sphinx: sosl's docstrings are numpydoc (every public callable), which numpydoc renders
and validates as they are; autosummary turns the public names of each module into one
reference page each, so the reference is generated, not written; sphinx-gallery runs the
examples at build time, so a broken example breaks the build; MyST lets the user guide stay
in Markdown, the README's language. The theme is furo; ``sphinx.ext.viewcode`` gives
every documented object a ``[source]`` link to its highlighted module. The build runs
offline with warnings as errors and nitpicky cross-references (``-W -n``).

The API pages are listed from each documented module's ``__all__`` when the build starts
(``api/index.rst`` is written here), so a new public object cannot be left out.
"""

import importlib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import sosl  # noqa: E402

project = "sosl"
author = "the sosl developers"
copyright = "2026, the sosl developers"
release = sosl.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",          # a [source] link beside every documented Python object
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "examples/*", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5",
                    "**/sg_execution_times.rst", "sg_execution_times.rst"]
root_doc = "index"
templates_path = ["_templates"]
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
suppress_warnings = ["myst.header"]   # some guide sections open below level 1

# furo: maintained, readable on a phone, light and dark, and its code blocks scroll
# sideways instead of being cut at the column edge
html_theme = "furo"
html_static_path = []
html_title = f"sosl {release}"
pygments_style = "friendly"
pygments_dark_style = "monokai"

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False       # the class pages list their methods via autodoc
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()
# offline build: no inventories are fetched; external names in signatures are not links
intersphinx_mapping = {}
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|sklearn|river|dask|ray|joblib|pathlib|typing|collections"
               r"|numbers|concurrent|os|io)(\..*)?"),
    (r"py:.*", r"(ArrayLike|Self|Any|Callable|Iterable|Sequence|Mapping|NDArray)"),
    (r"py:class", r".*\.(ArrayLike|Self)$"),
    # names in the annotated signatures that have no page: pathlib's and os's path types
    # under the names the annotations use, scipy.sparse as ``sp``, the private base class
    (r"py:class", r"(StrPath|Path|BaseOnlineAUC|sp\..*)"),
    # the annotation aliases of sosl._typing (a private module, no page)
    (r"py:class", r"(Auto|RandomState|Detector|Budget|KernelName)"),
    # the standard library, every module of it: no inventory offline
    (r"py:.*", rf"({'|'.join(sorted(sys.stdlib_module_names))})(\..*)?"),
    # private modules named in module docstrings (the kernels and their references)
    (r"py:.*", r"sosl(\.\w+)*\._\w+.*"),
    # public submodules whose names are re-exported by a documented module
    (r"py:mod", r"sosl\.(baselines|linear|okauc|sketch|ftrl|koil|polk)"),
    (r"py:.*", r"sosl\.experiments\.\w+.*"),
    # a parameter named in single backticks (the default role) in run_experiment
    (r"py:.*", r"ceilings"),
]

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "plot_gallery": "True",
    "abort_on_example_error": True,
    "within_subsection_order": "FileNameSortKey",
}

# ---- the API reference, one autosummary table per module, from its __all__ -------------
API_MODULES = [
    ("Estimators", "sosl", "The learners, each a scikit-learn binary classifier."),
    ("Metrics", "sosl.metrics", "Exact batch and streaming ranking metrics."),
    ("Evaluation", "sosl.evaluate", "Test-then-train evaluation of a learner over a stream."),
    ("Data", "sosl.datasets", "Dataset registry, loaders, checksums and synthetic streams."),
    ("river adapters", "sosl.river", "Every learner as a river classifier."),
    ("Kernels", "sosl.kernels", "Kernel functions, widths and budgets."),
    ("KOMP", "sosl.komp", "Kernel orthogonal matching pursuit pruning."),
    ("Warnings", "sosl.exceptions", "Warning categories."),
    ("Model state", "sosl.state", "A fitted model's state: export, restore and merge."),
    ("Model files", "sosl.io", "Saving and loading models without pickles."),
    ("Drift", "sosl.drift", "Change detection and the forgetting='auto' controller."),
    ("Partial AUC", "sosl.partial", "The FPR budget's rank rule of PartialOAUCM."),
    ("Data-parallel fit", "sosl.dask", "Training on shards of the data, then merging."),
    ("Command line", "sosl.cli", "The sosl learn / sosl score command line."),
    ("Experiments", "sosl.experiments", "The paper's experimental protocol."),
    ("Experiment summary", "sosl.experiments.summary",
     "Reducing the runner's rows: protocols, ceilings, the run summary, costs."),
    ("Experiment tables", "sosl.experiments.tables",
     "The tables beside the paper's values and the result record."),
    ("Experiment runner", "sosl.experiments.runner",
     "The runner's public names that sosl.experiments does not re-export."),
]


def _write_api_index():
    lines = [".. This file is written by conf.py from each module's __all__; do not edit.", "",
             "API reference", "=============", "",
             "Every public name of every module below, one page each, generated from its",
             "docstring.", ""]
    experiments = importlib.import_module("sosl.experiments")
    top = importlib.import_module("sosl")
    paged = set()    # (name, object) of the experiments' submodules documented so far
    for title, modname, blurb in API_MODULES:
        mod = importlib.import_module(modname)
        names = [n for n in mod.__all__ if not n.startswith("__")]
        if modname != "sosl":      # an estimator re-exported by sosl has its page there
            names = [n for n in names if getattr(top, n, None) is not getattr(mod, n)]
        if modname.startswith("sosl.experiments."):  # a re-exported name has one page
            names = [n for n in names if getattr(experiments, n, None) is not getattr(mod, n)
                     and (n, id(getattr(mod, n))) not in paged]
            paged.update((n, id(getattr(mod, n))) for n in names)
        lines += [title, "-" * len(title), "", f".. automodule:: {modname}", "   :no-members:",
                  "", blurb, "", f".. currentmodule:: {modname}", "", ".. autosummary::",
                  "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in names] + [""]
    text = "\n".join(lines)
    path = HERE / "api" / "index.rst"
    path.parent.mkdir(exist_ok=True)       # docs/api/ holds only generated files (untracked)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


_write_api_index()


# ---- docstrings written for the terminal, read here as reStructuredText -----------------
# The docstrings use plain-text notation that reST gives a meaning to: |S_t| (a
# substitution), t_ and coef_ (a reference). Outside ``code`` spans these are escaped
# before numpydoc reads the docstring; what the reader sees is unchanged.
_CODE = re.compile(r"(``.+?``|`[^`]+`)")
_BAR = re.compile(r"\|")
_TRAILING = re.compile(r"(?<=\w)_(?!\w)")


def _escape_prose(line):
    if line.lstrip().startswith((">>>", "...")):
        return line
    parts = _CODE.split(line)
    for i in range(0, len(parts), 2):               # the even parts are outside code spans
        parts[i] = _TRAILING.sub(r"\_", _BAR.sub(r"\|", parts[i]))
    return "".join(parts)


def _escape_docstring(app, what, name, obj, options, lines):
    literal = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if literal and stripped and not line.startswith((" ", "\t")):
            literal = False
        if not literal:
            lines[i] = _escape_prose(line)
        if stripped.endswith("::"):
            literal = True


# a bare :func:`name` in a docstring of a module whose names are documented under another
# module (sosl.experiments.runner's, shown as sosl.experiments.*) resolves to the one
# documented object of that name, the way Sphinx resolves a ``.name`` reference
def _resolve_bare_name(app, env, node, contnode):
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target or "." in target:
        return None
    from sphinx.util.nodes import make_refnode
    objects = env.get_domain("py").objects
    found = [full for full in objects if full.endswith("." + target)]
    if len(found) != 1:
        return None
    entry = objects[found[0]]
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode,
                        found[0])


def setup(app):
    app.connect("autodoc-process-docstring", _escape_docstring, priority=100)
    app.connect("missing-reference", _resolve_bare_name)
