"""Checks of the built documentation site, run by ``make docs`` after the HTML build.

1. Links: every internal link of every page (an ``href`` or ``src`` that names a local file,
   relative to the page) must name a file of the site, and its ``#anchor``, when it points
   into a page, an ``id`` (or ``<a name>``) of that page. The pages are read with the
   standard library's :mod:`html.parser`; external links (``https:``, ``mailto:``, ...) are
   not followed (the build is offline).
2. Rendering: the front page and one API page are opened in headless Chromium; a screenshot
   of each is written under ``docs/_build/screenshots/`` and the DOM the browser rendered
   must show the expected heading (the front page's title, read from ``docs/index.md``,
   and the API page's class name).

Without Chromium the script says so in one line and fails, unless ``--no-browser`` is
given (then only the links are checked). Exit code 0 when everything holds, 1 when a check
fails (the problems are listed on stderr), 2 for a command-line mistake.

Usage::

    python docs/check_render.py [BUILD_DIR] [--api-page api/generated/sosl.OAUCM.html]
                                [--screenshots DIR] [--no-browser]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

HERE = Path(__file__).resolve().parent
DEFAULT_BUILD = HERE / "_build" / "html"
DEFAULT_API_PAGE = "api/generated/sosl.OAUCM.html"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
LINK_ATTRS = {"href", "src"}


class _PageParser(HTMLParser):
    """The ids of one page and its links, each with its line number."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []                   # (line, attribute value)

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in LINK_ATTRS:
                self.links.append((self.getpos()[0], value))

    handle_startendtag = handle_starttag


def _parse(path):
    parser = _PageParser()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    return parser


def _is_internal(url):
    parts = urlsplit(url)
    return not (parts.scheme or parts.netloc or url.startswith("//"))


def check_links(root):
    """Broken internal links of the site under ``root``, one line each (empty: none)."""
    root = Path(root).resolve()
    pages = sorted(root.rglob("*.html"))
    if not pages:
        return [f"{root}: no .html files (was the site built?)"]
    parsed = {}

    def page(path):
        if path not in parsed:
            parsed[path] = _parse(path)
        return parsed[path]

    broken = []
    for src in pages:
        for line, url in page(src).links:
            if not _is_internal(url):
                continue
            parts = urlsplit(url)
            where = f"{src.relative_to(root)}:{line}: {url!r}"
            target = src if not parts.path else (src.parent / unquote(parts.path)).resolve()
            if parts.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            if target != root and root not in target.parents:
                broken.append(f"{where}: points outside the site ({target})")
                continue
            if not target.is_file():
                broken.append(f"{where}: no file {target.relative_to(root)}")
                continue
            anchor = unquote(parts.fragment)
            # the highlighted sources of sphinx.ext.viewcode (_modules/) link back to each
            # object's page; for a name documented under two modules (a re-export) the link
            # takes the page of one and the anchor of the other, so only the page is checked
            viewcode = src.relative_to(root).parts[0] == "_modules"
            if anchor and not viewcode and target.suffix == ".html" \
                    and anchor not in page(target).ids:
                broken.append(f"{where}: no id {anchor!r} in {target.relative_to(root)}")
    return broken


class _Headings(HTMLParser):
    """The text of each h1 of a page's content, without Sphinx's permalink marks (the
    sidebar's site name, an ``h1`` of class ``logo`` in the theme, is not a heading)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.h1 = []
        self._depth = 0                   # inside an h1
        self._skip = 0                    # inside a headerlink anchor

    def handle_starttag(self, tag, attrs):
        if tag == "h1" and self._depth:
            self._depth += 1
        elif tag == "h1" and "logo" not in (dict(attrs).get("class") or "").split():
            self._depth = 1
            self.h1.append("")
        elif self._depth and tag == "a" and "headerlink" in (dict(attrs).get("class") or ""):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == "h1" and self._depth:
            self._depth -= 1
            self.h1[-1] = " ".join(self.h1[-1].split())
        elif tag == "a" and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if self._depth and not self._skip:
            self.h1[-1] += data


def rendered_h1(dom):
    """The h1 texts of a page's content in a DOM as the browser dumped it."""
    parser = _Headings()
    parser.feed(dom)
    parser.close()
    return parser.h1


def find_browser():
    """The Chromium executable ($CHROMIUM, or the first of BROWSERS on PATH), or None."""
    if os.environ.get("CHROMIUM"):
        return shutil.which(os.environ["CHROMIUM"])
    return next((found for name in BROWSERS if (found := shutil.which(name))), None)


def _chromium(browser, url, *args):
    with tempfile.TemporaryDirectory(prefix="sosl-chromium-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-dev-shm-usage", "--hide-scrollbars", f"--user-data-dir={profile}",
               "--window-size=1280,1600", "--virtual-time-budget=3000", *args, url]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def front_page_title(index_md=HERE / "index.md"):
    """The front page's title as written in its source (its first ``# `` heading)."""
    for line in Path(index_md).read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    raise ValueError(f"{index_md}: no level-1 heading")


def _png_varies(path):
    """Whether the screenshot has more than one colour (a blank page has one)."""
    try:
        import matplotlib.image
    except ImportError:                   # cannot decode: only require a non-empty file
        return path.stat().st_size > 0
    pixels = matplotlib.image.imread(path)
    return bool((pixels != pixels[0, 0]).any())


def check_rendering(root, api_page, shots, browser):
    """Render the front page and ``api_page``; problems, one line each (empty: none)."""
    root = Path(root).resolve()
    shots = Path(shots)
    shots.mkdir(parents=True, exist_ok=True)
    # the front page's title as written in docs/index.md; an API page's title is the full
    # name of its object (sosl.OAUCM), which is also the file's stem
    expected = {"index.html": front_page_title(), api_page: Path(api_page).stem}
    problems = []
    for rel, heading in expected.items():
        path = root / rel
        if not path.is_file():
            problems.append(f"{rel}: not in the build")
            continue
        url = path.as_uri()
        shot = shots / (Path(rel).stem + ".png")
        shot.unlink(missing_ok=True)
        run = _chromium(browser, url, f"--screenshot={shot}")
        if run.returncode != 0 or not shot.is_file():
            problems.append(f"{rel}: Chromium wrote no screenshot (exit {run.returncode}): "
                            f"{run.stderr.strip()[-300:]}")
        elif not _png_varies(shot):
            problems.append(f"{rel}: the screenshot {shot} is a single colour (blank page)")
        dom = _chromium(browser, url, "--dump-dom")
        titles = rendered_h1(dom.stdout)
        if dom.returncode != 0 or not titles or titles[0] != heading:
            problems.append(f"{rel}: rendered h1 {titles!r}, expected {heading!r} first"
                            + (f" (Chromium exit {dom.returncode})" if dom.returncode else ""))
        elif rel != "index.html" and f'id="{heading}"' not in dom.stdout:
            problems.append(f"{rel}: the rendered page has no description of {heading}")
        else:
            print(f"check_render: {rel}: h1 {titles[0]!r}, screenshot {shot}")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=str(DEFAULT_BUILD),
                    help="the HTML build folder (default: docs/_build/html)")
    ap.add_argument("--api-page", default=DEFAULT_API_PAGE,
                    help="the API page to render, relative to the build folder")
    ap.add_argument("--screenshots", default=None,
                    help="where the screenshots go (default: BUILD/../screenshots)")
    ap.add_argument("--no-browser", action="store_true",
                    help="check the links only, without rendering in Chromium")
    args = ap.parse_args(argv)
    root = Path(args.build)
    if not root.is_dir():
        ap.error(f"no build folder {root} (run the Sphinx build first)")

    problems = check_links(root)
    n_pages = len(list(root.rglob("*.html")))
    if problems:
        print(f"check_render: {len(problems)} broken internal link(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
    else:
        print(f"check_render: every internal link of the {n_pages} pages resolves")

    if not args.no_browser:
        browser = find_browser()
        if browser is None:
            print("check_render: Chromium not found (install it, e.g. `apt-get install "
                  "chromium`, or set $CHROMIUM; --no-browser skips the rendering check)",
                  file=sys.stderr)
            return 1
        shots = Path(args.screenshots) if args.screenshots else root.parent / "screenshots"
        rendering = check_rendering(root, args.api_page, shots, browser)
        for p in rendering:
            print(f"check_render: {p}", file=sys.stderr)
        problems += rendering
    else:
        print("check_render: --no-browser: the pages were not rendered")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
