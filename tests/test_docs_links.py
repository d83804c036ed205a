"""The link checker of the documentation build (docs/check_render.py) on small hand-made
sites: good links pass, a link to a missing file, to a missing anchor or out of the site is
reported, and the command line fails on them. No Sphinx build and no browser are needed."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_render", ROOT / "docs" / "check_render.py")
cr = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cr)


def _page(body):
    return f"<!DOCTYPE html><html><head><title>t</title></head><body>\n{body}\n</body></html>"


def _site(tmp_path, extra=""):
    """index.html, api/page.html and a stylesheet, all linked correctly, plus ``extra``
    in index.html."""
    (tmp_path / "api").mkdir(parents=True)
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "style.css").write_text("body {}")
    (tmp_path / "index.html").write_text(_page(
        '<link rel="stylesheet" href="_static/style.css">\n'
        '<h1 id="top">Top</h1>\n'
        '<a href="api/page.html">page</a>\n'
        '<a href="api/page.html#sosl.Thing">a section by id</a>\n'
        '<a href="api/page.html#old-name">an anchor by name</a>\n'
        '<a href="#top">this page</a>\n'
        '<a href="api/">a folder</a>\n'
        '<a href="https://example.org/missing.html#x">external</a>\n'
        '<a href="mailto:someone@example.org">mail</a>\n' + extra))
    (tmp_path / "api" / "page.html").write_text(_page(
        '<dt id="sosl.Thing">Thing</dt><a name="old-name"></a>\n'
        '<a href="../index.html#top">back</a>\n'
        '<a href="page.html#sosl%2EThing">quoted anchor</a>'))
    (tmp_path / "api" / "index.html").write_text(_page('<a href="../index.html">up</a>'))
    return tmp_path


def test_good_links_pass(tmp_path):
    assert cr.check_links(_site(tmp_path)) == []


@pytest.mark.parametrize("href, reason", [
    ("api/missing.html", "no file api/missing.html"),
    ("api/page.html#no-such-id", "no id 'no-such-id' in api/page.html"),
    ("#nowhere", "no id 'nowhere' in index.html"),
    ("_static/missing.css", "no file _static/missing.css"),
    ("../outside.html", "points outside the site"),
])
def test_broken_link_is_reported(tmp_path, href, reason):
    broken = cr.check_links(_site(tmp_path, f'<a href="{href}">bad</a>'))
    assert len(broken) == 1, broken
    assert broken[0].startswith("index.html:") and repr(href) in broken[0]
    assert reason in broken[0]


def test_every_broken_link_is_listed_with_its_line(tmp_path):
    site = _site(tmp_path)
    (site / "api" / "page.html").write_text(_page(
        '<dt id="sosl.Thing"></dt><a name="old-name"></a>\n'
        '<a href="gone.html">one</a>\n<img src="../_static/gone.png">\n'
        '<a href="../index.html#gone">three</a>'))
    broken = cr.check_links(site)
    assert [b.split(": ", 1)[0] for b in broken] == ["api/page.html:3", "api/page.html:4",
                                                     "api/page.html:5"]


def test_a_checker_that_ignores_anchors_misses_the_broken_one(tmp_path, monkeypatch):
    # mutant: every page claims every id, so a broken #anchor is no longer seen; the case
    # above must depend on the anchor check, not on something else about the link
    site = _site(tmp_path, '<a href="api/page.html#no-such-id">bad</a>')
    assert len(cr.check_links(site)) == 1

    class Everything(set):
        def __contains__(self, item):
            return True

    parse = cr._parse

    def blind(path):
        parser = parse(path)
        parser.ids = Everything()
        return parser

    monkeypatch.setattr(cr, "_parse", blind)
    assert cr.check_links(site) == []


def test_empty_build_is_an_error(tmp_path):
    assert "no .html files" in cr.check_links(tmp_path)[0]


def test_command_line(tmp_path, capsys):
    site = _site(tmp_path / "good")
    assert cr.main([str(site), "--no-browser"]) == 0
    bad = tmp_path / "bad"
    bad.mkdir()
    _site(bad, '<a href="nope.html">bad</a>')
    assert cr.main([str(bad), "--no-browser"]) == 1
    err = capsys.readouterr().err
    assert "1 broken internal link" in err and "'nope.html'" in err
    with pytest.raises(SystemExit) as exc:
        cr.main([str(tmp_path / "absent")])
    assert exc.value.code == 2


def test_missing_browser_fails_loudly(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cr, "find_browser", lambda: None)
    assert cr.main([str(_site(tmp_path))]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Chromium not found" in err[0] and "--no-browser" in err[0]


def test_rendered_headings():
    dom = ('<div class="sphinxsidebar"><h1 class="logo"><a href="#">sosl</a></h1></div>'
           '<div class="body"><h1>sosl.OAUCM<a class="headerlink" href="#x">¶</a></h1>'
           '<h1>Second <em>one</em></h1></div>')
    assert cr.rendered_h1(dom) == ["sosl.OAUCM", "Second one"]


def test_front_page_title_is_read_from_the_source(tmp_path):
    (tmp_path / "index.md").write_text("Intro\n\n# The title\n\n## Below\n")
    assert cr.front_page_title(tmp_path / "index.md") == "The title"
    (tmp_path / "none.md").write_text("## only level two\n")
    with pytest.raises(ValueError, match="no level-1 heading"):
        cr.front_page_title(tmp_path / "none.md")


def test_viewcode_back_links_are_checked_for_their_page_only(tmp_path):
    """sphinx.ext.viewcode's source pages (_modules/) link back to each object's page; a
    re-exported name gets the anchor of its other module there, so only the page counts.
    A missing page is still reported, and other pages' anchors are still checked."""
    site = _site(tmp_path)
    (site / "_modules").mkdir()
    (site / "_modules" / "m.html").write_text(_page(
        '<a href="../api/page.html#sosl.other.Thing">[docs]</a>\n'
        '<a href="../api/gone.html#sosl.Thing">[docs]</a>'))
    broken = cr.check_links(site)
    assert len(broken) == 1 and "no file api/gone.html" in broken[0], broken


def test_the_site_has_a_maintained_theme_and_source_links():
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert 'html_theme = "furo"' in conf and '"sphinx.ext.viewcode"' in conf
    import tomllib
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["docs"]
    assert any(req.startswith("furo") for req in extra)
    front = (ROOT / "docs" / "index.md").read_text()
    assert "pip install" in front and ">>> from sosl import" in front
