"""A run page's "Signed provenance" section: who signed the run's manifest digest, with
the Sigstore bundle itself, so a reader can check it with sigstore-python's own CLI
(or `hbench audit`) without trusting this site.

A run without a signature shows that it has none, and what that leaves it with.
"""

from __future__ import annotations

from registry.datarepo.models import PublishedRun
from registry.signature import RunSignature
from sitebuild.format import NONE, when
from sitebuild.html import Markup, const, template

_SECTION = template(
    '<section aria-labelledby="signature-heading">\n'
    '<h2 id="signature-heading">Signed provenance</h2>\n'
    "{body}"
    "</section>\n\n"
)
_UNSIGNED = const(
    "<p>No signature: the upload carried no Sigstore bundle the service took. What the run "
    "proves is its evidence above, and no more.</p>\n"
)
_SIGNED = template(
    "<p>A Sigstore bundle signs this run's manifest digest. It proves that the workflow "
    "below, at that commit, signed the digest, and that Sigstore's transparency log holds "
    "the signature; nothing about the job beyond its digest.</p>\n"
    '<dl class="facts">\n'
    "<dt>Signed digest</dt><dd><code>{digest}</code></dd>\n"
    "<dt>Signer</dt><dd><code>{workflow}</code></dd>\n"
    "<dt>Signer's commit</dt><dd><code>{sha}</code></dd>\n"
    "<dt>Issuer</dt><dd><code>{issuer}</code></dd>\n"
    "<dt>Repository</dt><dd>{repository}</dd>\n"
    "<dt>Workflow run</dt><dd>{run}</dd>\n"
    "<dt>Runner</dt><dd>{runner}</dd>\n"
    "<dt>Logged</dt><dd>entry {index}, {logged}</dd>\n"
    "</dl>\n"
    "<details><summary>The bundle (<code>{path}</code> in the data repository)</summary>\n"
    "<p>Save it as <code>manifest.sigstore.json</code> and check it with "
    "<code>sigstore verify github --bundle manifest.sigstore.json --digest sha256:{digest} "
    "--cert-identity https://github.com/{workflow}</code>, or audit a clone of the data "
    "repository with <code>hbench audit</code>.</p>\n"
    "<pre><code>{bundle}</code></pre>\n"
    "</details>\n"
)
_RUN_LINK = template('<a href="{url}">{url}</a>')


def signature_section(run: PublishedRun, bundle: str | None) -> Markup:
    """The section for `run`, given its bundle's text (None when it has no signature)."""
    signature = run.signature
    if signature is None or bundle is None:
        return _SECTION(body=_UNSIGNED)
    return _SECTION(body=_signed(signature, bundle))


def _signed(signature: RunSignature, bundle: str) -> Markup:
    run: object = NONE
    if signature.run_url and signature.run_url.startswith("https://github.com/"):
        run = _RUN_LINK(url=signature.run_url)
    return _SIGNED(
        digest=signature.digest,
        workflow=signature.workflow_ref,
        sha=signature.workflow_sha,
        issuer=signature.issuer,
        repository=signature.repository or NONE,
        run=run,
        runner=signature.runner or NONE,
        index=signature.log_index,
        logged=when(signature.logged_at),
        path=signature.bundle,
        bundle=bundle,
    )
