"""
MkDocs hooks for the documentation site (mkdocs.yml, ``hooks:``).

The docstrings cross-reference in Sphinx's roles (``:class:`PrefixStripMapper```), which
mkdocstrings renders as the role's text before the code span; the API reference shows just the
code span (``~a.b.C`` as ``C``, as Sphinx does).
"""

import re

_ROLE = re.compile(r":(?:class|mod|func|meth|attr|data|exc|obj):<code>(?:~(?:[\w.]*\.)?)?")


def on_page_content(html, page, config, files):
    return _ROLE.sub("<code>", html) if page.file.src_uri.startswith("api/") else html
