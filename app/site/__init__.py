"""The static Pages site: the data repository in, a folder of HTML, JSON and SVG out.

`app.site.build.build_site` is the entry point; `docs/site.md` describes the pages.
"""
