"""The static Pages site: the data repository in, a folder of HTML, JSON and SVG out.

Pure: it reads a checkout of the data repository through `registry` and writes files;
it imports nothing of the service (`app`), which serves what it builds (`app.site`).
`sitebuild.build.build_site` is the entry point; `docs/site.md` describes the pages.
"""
