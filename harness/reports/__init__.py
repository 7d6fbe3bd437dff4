"""What the commands show: the text report of `explain` and `run -v` (text), the HTML reports of
`run`/`diff`/`sweep --html` (html) and the SVG charts (charts), rendered with jinja2 from
templates/.

Imports: compare (a diff's changes), case, framework, versions and the base modules; never
harness.cli (the commands call these, not the other way round).
"""
